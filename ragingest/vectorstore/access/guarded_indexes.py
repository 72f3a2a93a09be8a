"""The caller's access filter on a guarded store's two side indexes: the lexical index and the
parent sections (``GuardedSource.lexical`` and ``.parent_store``, and so a ``Collection`` opened for
principals, return these).

Contract: ``GuardedLexical(index, source).search`` returns the hits of ``index``'s own order
that ``source.held`` admits, ``offset`` to ``offset + limit`` of the admitted ones (pages of
``source.lexical_page(...)`` ids, doubled while too few pass, until the page asked for is full
or the index is done); its ``count`` is the admitted chunks. ``GuardedParents(parents,
access).mget`` returns each parent section only where its own metadata matches ``access``
(``seam.matches``; a section without ``access`` on a policy collection is refused), else None.
Both are read-only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from langchain_core.documents import Document

from ragingest.vectorstore.seam import Filter, LexicalSearch, ParentSource, matches


class AdmittedIds(Protocol):
    """What ``GuardedLexical`` asks of its ``GuardedSource``: which ids the caller may read."""

    def lexical_page(self, want: int) -> int: ...

    def held(self, ids: Sequence[str], where: Filter | None = None) -> set[str]: ...

    def chunk_ids(self, where: Filter | None = None) -> list[str]: ...


class GuardedLexical:
    """A lexical index that returns only the ids ``source`` (a ``GuardedSource``) holds."""

    def __init__(self, index: LexicalSearch, source: AdmittedIds) -> None:
        self.index, self.source = index, source

    def search(self, query: str, limit: int, offset: int = 0) -> list[tuple[str, float]]:
        """The admitted hits ``offset`` to ``offset + limit`` of the index's order."""
        want = offset + limit
        out: list[tuple[str, float]] = []
        raw, page = 0, self.source.lexical_page(want)
        while True:
            found = self.index.search(query, page, raw)
            if found:
                admitted = self.source.held([i for i, _ in found])
                out.extend(hit for hit in found if hit[0] in admitted)
            if len(out) >= want or len(found) < page:
                return out[offset:want]
            raw += len(found)
            page *= 2

    def count(self) -> int:
        """The admitted chunks."""
        return len(self.source.chunk_ids())


class GuardedParents:
    """Parent sections returned only where their ``access`` admits the caller."""

    def __init__(self, parents: ParentSource, access: Filter) -> None:
        self.parents, self.access = parents, access

    def mget(self, keys: Sequence[str]) -> list[Document | None]:
        return [
            doc if doc is not None and matches(self.access, doc.metadata) else None
            for doc in self.parents.mget(keys)
        ]
