"""What a LangChain user writes to a retriever, read or refused with what to write instead
(``heading_first.HeadingFirstRetriever``): ``search_kwargs``' names, a ``k`` for one call
(``invoke(q, k=2)`` or ``config={"configurable": {"k": 2}}``), a ``k`` given as text, and the
metadata keys a ``where`` needs a chunk to have."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from ragingest.vectorstore.seam import AllOf, AnyOf, Condition, Filter

SEARCH_KWARGS = {"k": "k", "filter": "where", "fetch_k": "fetch_k", "lambda_mult": "lambda_mult"}


def whole_k(value: Any, name: str = "k") -> int:
    """``value`` as a number of passages: an int, or a string of digits; else ``ValueError``."""
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be a whole number (e.g. {name}=4), not {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be 0 or more (the number of passages), not {value}")
    return value


def call_k(config: RunnableConfig | None, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The call's keywords with ``k`` checked, from ``config["configurable"]`` when not given
    (``{"k": 2}`` or ``{"search_kwargs": {"k": 2}}``); any other keyword: a TypeError."""
    unknown = set(kwargs) - {"k"}
    if unknown:
        raise TypeError(
            f"invoke() takes k= for one call, not {', '.join(sorted(unknown))}; set the others "
            "on the retriever (ragingest.retriever(..., where=...))"
        )
    configurable = dict((config or {}).get("configurable") or {})
    k = kwargs.get("k")
    if k is None:
        k = configurable.get("k", (configurable.get("search_kwargs") or {}).get("k"))
    return {} if k is None else {"k": whole_k(k)}


def required_keys(where: Filter | None) -> set[str]:
    """The keys a chunk must have to pass ``where`` (all of an ``AllOf``'s parts, the keys
    common to an ``AnyOf``'s; none for ``$ne``/``$nin``)."""
    if where is None:
        return set()
    if isinstance(where, Condition):
        return set() if where.op in ("$ne", "$nin") else {where.key}
    if isinstance(where, AllOf):
        return set().union(*(required_keys(p) for p in where.parts))
    assert isinstance(where, AnyOf)
    sets = [required_keys(p) for p in where.parts]
    return set.intersection(*sets) if sets else set()
