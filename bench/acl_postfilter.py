"""A prototype, in the bench only, of two cheaper ways for the store seam to apply a caller's
access filter, measured by ``bench.serve --filtered --prototypes`` beside Chroma's own filter.

Chroma (1.5.9, embedded and ``chroma run``) evaluates a ``where`` over the whole collection
before it searches: a filtered query, and a get of 20 ids with a ``where``, cost in proportion
to the number of chunks the filter admits (bench/README.md, "Filtered-query latency"). The two
wrappers below keep the retriever unchanged and answer the seam's filtered reads otherwise:

- ``post``: the dense search asks Chroma for the unfiltered nearest ``max(n, POOL)`` ids, keeps
  those whose stored metadata passes the filter (``seam.matches``, the exact in-memory store's
  own test; the metadata fetched by id), doubling the pool while fewer than ``n`` remain, and
  falls back to Chroma's filtered query past ``CAP``; a filtered read by ids fetches the ids and
  tests them the same way;
- ``cached``: the ids each principal may read (``chunk_ids`` under ``{"access": {"$contains":
  p}}``), read once and kept; a filtered read then intersects. Valid only while the collection
  does not change: the product would key the cache by a write generation that every write
  group bumps under the write gate (not there today). The bench's collection does not change
  while it is measured.

Any other ``where`` goes to the wrapped store unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragingest.schema import ACCESS_KEY
from ragingest.vectorstore.seam import AnyOf, Condition, Filter, StoredChunk, matches

POOL = 200  # the collection's HNSW search_ef: asking for up to this many costs about the same
CAP = 1600
SLICE = 50  # ids whose metadata one get brings, in rank order


def principals_of(where: Filter | None) -> list[str] | None:
    """The principal strings of an access filter (an ``AnyOf`` of ``$contains`` on
    ``ACCESS_KEY``, or one such condition); None for any other filter."""
    parts = where.parts if isinstance(where, AnyOf) else (where,)
    names = []
    for part in parts:
        if not (isinstance(part, Condition) and part.key == ACCESS_KEY and part.op == "$contains"):
            return None
        names.append(str(part.value))
    return names


class FilteredReads:
    """A ``seam.ChunkSource`` over ``inner`` (a ``Collection`` over Chroma) whose
    access-filtered reads are answered by ``mode`` ("post" or "cached", module docstring)."""

    def __init__(self, inner: Any, mode: str, principals: list[str] | None = None) -> None:
        self.inner, self.mode, self.principals = inner, mode, principals
        self.handle = inner.index.collection  # the chromadb collection (``ChromaIndex``)
        self.readable: dict[str, set[str]] = {}
        self.fallbacks = 0

    @property
    def lexical(self) -> Any:
        """The lexical index; under ``cached`` with the reader's ``principals``, one that
        ranks only what they may read (so the retriever never pages past others' hits)."""
        if self.mode != "cached" or self.principals is None or self.inner.lexical is None:
            return self.inner.lexical
        return AdmittedLexical(self.inner.lexical, self, self.principals)

    # the reads the filter does not touch
    gate = property(lambda self: self.inner.gate)
    parent_store = property(lambda self: self.inner.parent_store)
    remote = property(lambda self: self.inner.remote)
    chunks_with_dense = property(lambda self: self.inner.chunks_with_dense)

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)  # type: ignore[no-any-return]

    def count(self) -> int:
        return self.inner.count()  # type: ignore[no-any-return]

    def lexical_in_step(self) -> bool:
        return self.inner.lexical_in_step()  # type: ignore[no-any-return]

    def vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        return self.inner.vectors(ids)  # type: ignore[no-any-return]

    def chunk_ids(self, where: Filter | None = None) -> list[str]:
        return self.inner.chunk_ids(where)  # type: ignore[no-any-return]

    # the filtered reads
    def admitted(self, ids: Sequence[str], where: Filter) -> set[str]:
        """Which of ``ids`` (stored ones) ``where`` admits."""
        if not ids:
            return set()
        names = principals_of(where)
        if self.mode == "cached" and names is not None:
            for name in names:
                if name not in self.readable:
                    flt = Condition(ACCESS_KEY, "$contains", name)
                    self.readable[name] = set(self.inner.chunk_ids(flt))
            return {i for i in ids if any(i in self.readable[n] for n in names)}
        got = self.handle.get(ids=list(ids), include=["metadatas"])
        pairs = zip(got["ids"], got["metadatas"], strict=True)
        return {str(i) for i, meta in pairs if matches(where, dict(meta or {}))}

    def held(self, ids: Sequence[str], where: Filter | None = None) -> set[str]:
        if where is None or principals_of(where) is None:
            return self.inner.held(ids, where)  # type: ignore[no-any-return]
        return self.admitted(ids, where)

    def chunks(
        self, ids: Sequence[str] | None = None, where: Filter | None = None
    ) -> list[StoredChunk]:
        if ids is None or where is None or principals_of(where) is None:
            return self.inner.chunks(ids, where)  # type: ignore[no-any-return]
        if not ids:
            return []
        if self.mode == "cached":
            allowed = sorted(self.admitted(ids, where))
            return self.inner.chunks(allowed) if allowed else []  # type: ignore[no-any-return]
        return [c for c in self.inner.chunks(ids) if matches(where, c.metadata)]

    def nearest(
        self, vector: Sequence[float], n: int, where: Filter | None = None
    ) -> list[tuple[str, float]]:
        if where is None or principals_of(where) is None:
            return self.inner.nearest(vector, n, where)  # type: ignore[no-any-return]
        pool = max(n, POOL)
        while pool <= CAP:
            found = self.inner.nearest(vector, pool)
            kept: list[tuple[str, float]] = []
            for first in range(0, len(found), SLICE):
                part = found[first : first + SLICE]
                allowed = self.admitted([i for i, _ in part], where)
                kept.extend(pair for pair in part if pair[0] in allowed)
                if len(kept) >= n:
                    return kept[:n]
            if len(found) < pool:  # the whole collection was read
                return kept
            pool *= 2
        self.fallbacks += 1
        return self.inner.nearest(vector, n, where)  # type: ignore[no-any-return]

    def nearest_chunks(
        self, vector: Sequence[float], n: int, where: Filter | None = None
    ) -> list[tuple[StoredChunk, float]]:
        if where is None or principals_of(where) is None:
            return self.inner.nearest_chunks(vector, n, where)  # type: ignore[no-any-return]
        if self.mode == "cached":  # ids first: one more call, n chunks sent instead of POOL
            return self._admitted_chunks(vector, n, where)
        pool = max(n, POOL)
        while pool <= CAP:
            found = self.inner.nearest_chunks(vector, pool)
            kept = [(c, d) for c, d in found if matches(where, c.metadata)]
            if len(kept) >= n or len(found) < pool:
                return kept[:n]
            pool *= 2
        self.fallbacks += 1
        return self.inner.nearest_chunks(vector, n, where)  # type: ignore[no-any-return]

    def _admitted_chunks(
        self, vector: Sequence[float], n: int, where: Filter
    ) -> list[tuple[StoredChunk, float]]:
        nearest = self.nearest(vector, n, where)
        by_id = {c.id: c for c in self.inner.chunks([i for i, _ in nearest])} if nearest else {}
        return [(by_id[i], d) for i, d in nearest if i in by_id and by_id[i].text is not None]


class AdmittedLexical:
    """A lexical index whose ranking holds only the chunks ``principals`` may read: the
    index's own ranking (BM25 over the whole collection) read in larger pages and filtered
    by the cached id sets."""

    def __init__(self, inner: Any, reads: FilteredReads, principals: list[str]) -> None:
        self.inner, self.reads = inner, reads
        self.where = AnyOf(tuple(Condition(ACCESS_KEY, "$contains", p) for p in principals))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def search(self, query: str, limit: int, offset: int = 0) -> list[tuple[str, float]]:
        want, page = offset + limit, 8 * (offset + limit)
        while True:
            found = self.inner.search(query, page, 0)
            allowed = self.reads.admitted([i for i, _ in found], self.where)
            kept = [pair for pair in found if pair[0] in allowed]
            if len(kept) >= want or len(found) < page:
                return kept[offset:want]
            page *= 4


def prototype_retriever(store: Any, where: dict[str, Any], mode: str) -> Any:
    """The retriever ``ragingest.retriever(..., where=where)`` builds by default (k 4, fetch_k
    20, hybrid, parents, dedup), reading through ``FilteredReads(store, mode)``."""
    from ragingest.retrieval.filters import as_filter
    from ragingest.retrieval.retriever import ChunkRetriever

    flt = as_filter(where)
    reads = FilteredReads(store, mode, principals_of(flt))
    return ChunkRetriever(
        store=reads, parent_store=store.parent_store, k=4, fetch_k=20, parents=True,
        dedup=True, where=flt,
    )  # fmt: skip
