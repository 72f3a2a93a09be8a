"""What a LangChain user writes to a retriever, read or refused with what to write instead
(``heading_first.HeadingFirstRetriever``): ``search_kwargs``' names, a ``k`` for one call
(``invoke(q, k=2)`` or ``config={"configurable": {"k": 2}}``), the ``where`` and the
``principals`` of one call (``config={"configurable": {"principals": [...]}}``), a ``k``
given as text, and the metadata keys a ``where`` needs a chunk to have."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig

from ragingest.retrieval.filters import as_filter
from ragingest.vectorstore.access.principals import Access, as_access
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


# what one call may set through ``config["configurable"]`` (the LangChain way), and the names
# of search settings and of readers a call cannot set that way: refused, never ignored. Other
# keys belong to other runnables of the chain (``thread_id``, an LLM's ``model``) and pass.
CONFIGURABLE = ("k", "where", "principals", "search_kwargs")
NOT_PER_CALL = frozenset(
    {
        "filter", "fetch_k", "lambda_mult", "search_type", "hybrid", "fusion", "dense_weight",
        "parents", "dedup", "max_context_tokens", "auto_merge", "user", "users", "group",
        "groups", "principal", "access",
    }
)  # fmt: skip


@dataclass(frozen=True)
class CallOptions:
    """What one call sets: ``k`` (None: the retriever's), ``where`` (ANDed with the
    retriever's; None: none) and ``principals`` (who reads for this call; None: the
    retriever's)."""

    k: int | None = None
    where: Any = None
    principals: Access | None = None


def call_options(config: RunnableConfig | None, kwargs: dict[str, Any]) -> CallOptions:
    """The call's options: ``k=`` as a keyword, else from ``config["configurable"]`` with
    ``where`` and ``principals`` (``{"k": 2, "where": {...}, "principals": [...]}``, or
    ``{"search_kwargs": {"k": 2, "filter": {...}}}``). Any other keyword is a TypeError; a
    configurable key that names a retriever setting no call can change is a ValueError
    saying so (it would otherwise be ignored silently)."""
    unknown = set(kwargs) - {"k"}
    if unknown:
        raise TypeError(
            f"invoke() takes k= for one call, not {', '.join(sorted(unknown))}; give where and "
            'principals for one call as config={"configurable": {"where": ..., "principals": '
            "...}}, set the others on the retriever (ragingest.retriever(..., hybrid=...))"
        )
    configurable = dict((config or {}).get("configurable") or {})
    search = dict(configurable.get("search_kwargs") or {})
    refused = sorted(NOT_PER_CALL & set(configurable)) + [
        f"search_kwargs[{key!r}]" for key in sorted(set(search) - {"k", "filter"})
    ]
    if refused:
        raise ValueError(
            f"config['configurable'] sets {', '.join(refused)}, which one call cannot change: "
            f"a call takes {', '.join(CONFIGURABLE)} (search_kwargs: k, filter); set the "
            "others on the retriever"
        )
    k = kwargs.get("k")
    if k is None:
        k = configurable.get("k", search.get("k"))
    where = configurable.get("where")
    if where is not None and search.get("filter") is not None:
        raise ValueError("config['configurable'] gives where and search_kwargs['filter']: give one")
    where = where if where is not None else search.get("filter")
    principals = configurable.get("principals")
    return CallOptions(
        None if k is None else whole_k(k),
        None if where is None else as_filter(where),
        None if principals is None else as_access(principals),
    )


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
