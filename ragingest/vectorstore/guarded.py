"""The one place reads are limited to what the caller may read: ``GuardedSource``.

Contract: ``GuardedSource(inner, principals)`` is a ``seam.ChunkSource`` over any other one
(``ChunkStore``, ``ChunkReader``, ``MemoryStore``). It reads the collection's policy marker
once (``inner.access_policy()``; a policy is never added to or dropped from a physical
collection) and turns the caller's principals into one filter (``access.access_filter``):
None (no policy, or ``ALL``) reads everything; a policy read with no principals raises
``PrincipalsRequiredError`` here, when it is opened. Every read of the contract gets that
filter ANDed into its own ``where``: ``nearest``, ``nearest_chunks``, ``chunks``, ``held``,
``chunk_ids``, ``vectors`` (only admitted ids), ``count`` (the admitted chunks). Its ``lexical``
returns only admitted ids (each page of the index checked against the store under the filter,
read deeper until the page asked for is full or the index is done), and its ``parent_store``
only parent sections whose own ``access`` admits the caller (on a policy collection a parent
without one is refused). ``lexical_in_step`` compares the whole index with the whole store.

How the filter is applied: Chroma evaluates a ``where`` over the metadata of every chunk it
admits before it searches (at 100 000 chunks a caller who may read a fifth of them pays
~100 ms against ~5 ms unfiltered, bench/README.md), while a read by ids is cheap. So a dense
read first takes the unfiltered top ``pool`` (``max(POOL_MIN, POOL_FACTOR * n)``) and keeps
the chunks whose own stored ``access`` admits the caller (``seam.matches``, the exact meaning
of the filter, on the metadata read in the same call); only when fewer than ``n`` pass and
the pool did not reach the end does it ask the store with the filter. A read by ids
(``chunks``, ``held``, the lexical pages) checks the returned chunks' metadata the same way.
Either path returns exactly what the filtered read returns (HNSW's approximation aside).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from langchain_core.documents import Document

from ragingest.vectorstore.access import Access, access_filter
from ragingest.vectorstore.seam import (
    AllOf,
    ChunkSource,
    Filter,
    LexicalSearch,
    ParentSource,
    StoredChunk,
    matches,
)

if TYPE_CHECKING:
    from ragingest.vectorstore.gate import ReadGate

FIRST_PAGE = 16  # ids of the lexical index checked at a time, doubled while too few pass
POOL_MIN = 200  # dense hits read unfiltered before the store's own filter is asked
POOL_FACTOR = 4


def both(where: Filter | None, access: Filter | None) -> Filter | None:
    """``where`` AND ``access`` (either may be None)."""
    if access is None or where is None:
        return where if access is None else access
    return AllOf((where, access))


class GuardedLexical:
    """A lexical index that returns only the ids ``source`` (a ``GuardedSource``) holds."""

    def __init__(self, index: LexicalSearch, source: GuardedSource) -> None:
        self.index, self.source = index, source

    def search(self, query: str, limit: int, offset: int = 0) -> list[tuple[str, float]]:
        """The admitted hits ``offset`` to ``offset + limit`` of the index's order."""
        want = offset + limit
        out: list[tuple[str, float]] = []
        raw, page = 0, max(want, FIRST_PAGE)
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


class GuardedSource:
    """Every read of ``inner`` limited to what ``principals`` may read (module docstring)."""

    def __init__(self, inner: ChunkSource, principals: Access) -> None:
        self.inner = inner
        self.principals = principals
        self.policy = inner.access_policy()
        self.access = access_filter(principals, self.policy)

    @property
    def lexical(self) -> LexicalSearch | None:
        index = self.inner.lexical
        if index is None or self.access is None:
            return index
        return GuardedLexical(index, self)

    @property
    def parent_store(self) -> ParentSource | None:
        parents = self.inner.parent_store
        if parents is None or self.access is None:
            return parents
        return GuardedParents(parents, self.access)

    @property
    def gate(self) -> ReadGate | None:
        return self.inner.gate

    @property
    def remote(self) -> bool:
        return self.inner.remote

    def access_policy(self) -> bool:
        return self.policy

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)

    def count(self) -> int:
        """The chunks the caller may read."""
        if self.access is None:
            return self.inner.count()
        return len(self.inner.chunk_ids(self.access))

    def lexical_in_step(self) -> bool:
        return self.inner.lexical_in_step()

    def nearest(
        self, vector: Sequence[float], n: int, where: Filter | None = None
    ) -> list[tuple[str, float]]:
        if self.access is None:
            return self.inner.nearest(vector, n, where)
        pool = max(POOL_MIN, POOL_FACTOR * n)
        found = self.inner.nearest(vector, pool, where)
        passed = self.held([i for i, _ in found], where)
        admitted = [(i, distance) for i, distance in found if i in passed]
        if len(admitted) >= n or len(found) < pool:
            return admitted[:n]
        return self.inner.nearest(vector, n, both(where, self.access))

    def nearest_chunks(
        self, vector: Sequence[float], n: int, where: Filter | None = None
    ) -> list[tuple[StoredChunk, float]]:
        if self.access is None:
            return self.inner.nearest_chunks(vector, n, where)
        pool = max(POOL_MIN, POOL_FACTOR * n)
        found = self.inner.nearest_chunks(vector, pool, where)
        admitted = [(c, d) for c, d in found if matches(self.access, c.metadata)]
        if len(admitted) >= n:  # (a chunk stored without text is not among ``found``)
            return admitted[:n]
        return self.inner.nearest_chunks(vector, n, both(where, self.access))

    def chunks(
        self, ids: Sequence[str] | None = None, where: Filter | None = None
    ) -> list[StoredChunk]:
        if self.access is None or ids is None:
            return self.inner.chunks(ids, both(where, self.access))
        return [c for c in self.inner.chunks(ids, where) if matches(self.access, c.metadata)]

    def held(self, ids: Sequence[str], where: Filter | None = None) -> set[str]:
        if self.access is None:
            return self.inner.held(ids, where)
        return {chunk.id for chunk in self.chunks(ids, where)}

    def chunk_ids(self, where: Filter | None = None) -> list[str]:
        return self.inner.chunk_ids(both(where, self.access))

    def vectors(
        self, ids: Sequence[str], where: Filter | None = None
    ) -> dict[str, list[float]]:
        return self.inner.vectors(ids, both(where, self.access))


def guarded(source: ChunkSource, principals: Access) -> GuardedSource:
    """``source`` read as ``principals`` (an already guarded source is unwrapped first, so a
    source is never guarded under two callers at once)."""
    if isinstance(source, GuardedSource):
        source = source.inner
    return GuardedSource(source, principals)
