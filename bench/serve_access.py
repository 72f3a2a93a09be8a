"""``bench.serve --filtered``: the same collection with an access list on every chunk, read by
the retriever unfiltered and as one of ``CALLERS`` signed-in users.

Readers (``schema.ACCESS_KEY``, the sorted principal strings of the contract in
``vectorstore.access``): each file (8 chunks) readable by 1-3 of ``GROUPS`` groups drawn
uniformly, about 10 % public (``"*"``). A caller: one user (no file names users, so that term
of the filter admits nothing) and 2-4 groups, so each reads about a fifth of the collection;
``narrow`` callers (``--narrow``) hold one group only (about 14 %).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

GROUPS = 50
CALLERS = 8
SEED = 37

# The one-line switch: "where" reads through today's API (the contract's filter passed as
# where=); "principals" through aclread's ``ragingest.retriever(..., principals=...)``, which
# also needs the collection marked as a policy collection (aclwrite's write path) and reads the
# unfiltered arm with ``principals=ALL``.
READ_WITH = "principals"


def store_settings() -> dict[str, Any] | None:
    """The settings the build records: under ``principals`` the policy marker (aclwrite's
    ``collection_info.POLICY_SETTING``), which makes a read without principals an error."""
    return {"access_policy": True} if READ_WITH == "principals" else None


def readers(file: int) -> list[str]:
    """File ``file``'s readers: seeded by its number, so the build and the checks agree."""
    rng = np.random.default_rng([SEED, file])
    if rng.random() < 0.10:
        return ["*"]
    drawn = rng.choice(GROUPS, size=int(rng.integers(1, 4)), replace=False)
    return sorted(f"group:g{g:02d}" for g in drawn)


def callers(narrow: bool) -> list[tuple[str, ...]]:
    """``CALLERS`` principal sets (module docstring)."""
    rng = np.random.default_rng(SEED + 1)
    out = []
    for n in range(CALLERS):
        size = 1 if narrow else int(rng.integers(2, 5))
        groups = rng.choice(GROUPS, size=size, replace=False)
        out.append((f"user:u{n:02d}", *(f"group:g{g:02d}" for g in sorted(groups))))
    return out


def readable_share(caller: tuple[str, ...], files: int) -> float:
    """The share of the ``files`` files that ``caller`` may read."""
    names = {*caller, "*"}
    return sum(bool(names & set(readers(f))) for f in range(files)) / files


def retriever_for(options: dict[str, Any], caller: tuple[str, ...] | None) -> Any:
    """``ragingest.retriever(**options)`` reading as ``caller`` (None: unfiltered)."""
    import ragingest
    from ragingest.vectorstore.access.principals import ALL, Principals, access_filter
    from ragingest.vectorstore.chroma.reader import to_chroma

    if READ_WITH == "principals":
        principals = ALL if caller is None else Principals(caller)
        return ragingest.retriever(**options, principals=principals)  # type: ignore[call-arg]
    if caller is None:
        return ragingest.retriever(**options)
    where = to_chroma(access_filter(Principals(caller), policy=True))
    return ragingest.retriever(**options, where=where)


def filtered_arms(
    options: dict[str, Any], narrow: bool, store: Any = None, ways: Sequence[str] = ()
) -> dict[str, Callable[[str], Any]]:
    """The unfiltered retriever and the filtered one (each question asked as the caller its
    text hashes to: the same caller for a question in every cell); with ``store`` (opened
    with the model) also the filtered reads of ``bench/acl_postfilter.py`` named in ``ways``."""
    arms = {"retriever, unfiltered": retriever_for(options, None).invoke}
    arms["retriever, as a caller"] = as_caller(
        [(c, retriever_for(options, c)) for c in callers(narrow)]
    )
    if store is not None:
        from bench.acl_postfilter import prototype_retriever
        from ragingest.vectorstore.access.principals import Principals, access_filter
        from ragingest.vectorstore.chroma.reader import to_chroma

        for mode in ways:
            signed_in = []
            for caller in callers(narrow):
                where = to_chroma(access_filter(Principals(caller), policy=True))
                signed_in.append((caller, prototype_retriever(store, where, mode)))
            arms[f"retriever, as a caller, {mode}"] = as_caller(signed_in)
    return arms


def as_caller(signed_in: list[tuple[tuple[str, ...], Any]]) -> Callable[[str], Any]:
    """A question asked through the retriever of the caller its text hashes to, its answer
    checked: every passage must be one the caller may read."""

    def ask(question: str) -> Any:
        caller, retriever = signed_in[zlib.crc32(question.encode()) % len(signed_in)]
        found = retriever.invoke(question)
        leaked = [d for d in found if not {*caller, "*"} & set(d.metadata.get("access") or ())]
        if leaked:  # a bench that measured an unfiltered read would report nothing useful
            raise AssertionError(f"{caller} got {leaked[0].metadata.get('source')}")
        return found

    return ask
