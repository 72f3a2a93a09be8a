"""The one place reads are limited to what the caller may read: ``GuardedSource``.

Contract: ``GuardedSource(inner, principals)`` is a ``seam.ChunkSource`` over any other one
(a ``collection.Collection``, whatever its store). It reads the collection's policy marker
once (``inner.access_policy()``; a policy is never added to or dropped from a physical
collection) and turns the caller's principals into one filter (``access.access_filter``):
None (no policy, or ``ALL``) reads everything; a policy read with no principals raises
``PrincipalsRequiredError`` here, when it is opened. Every read of the contract gets that
filter ANDed into its own ``where``: ``nearest``, ``nearest_chunks``, ``chunks``, ``held``,
``chunk_ids``, ``vectors`` (only admitted ids), ``count`` (the admitted chunks). Its ``lexical``
returns only admitted ids (each page of the index checked against the store under the filter,
read deeper until the page asked for is full or the index is done), and its ``parent_store``
only parent sections whose own ``access`` admits the caller (on a policy collection a parent
without one is refused); both wrappers live in ``guarded_indexes``.

How the filter is applied: Chroma evaluates a ``where`` over the metadata of every chunk it
admits before it searches (at 100 000 chunks a caller who may read a fifth of them pays
~100 ms against ~5 ms unfiltered, bench/README.md), and a get of a few ids with that
``where`` costs as much. So on a store with a read gate the ids each of the caller's
principals may read are kept (``readable_ids``, per write generation: a write drops them)
and a filtered read becomes an unfiltered one and set lookups:

- a dense read takes the unfiltered top ``pool`` and keeps the admitted ids, ``pool`` sized to
  the caller's share of the collection (``POOL_FACTOR * n / share``, at least ``POOL_MIN``);
  when that pool would pass ``POOL_CAP`` (a caller who may read little, whom Chroma's filter
  serves cheaply), or when fewer than ``n`` pass and the pool did not reach the end, the
  store's own filter answers;
- reads by ids (``chunks``, ``held``, ``vectors``, the lexical pages) drop the others' ids
  before the store is asked; the lexical index is read ``1 / share`` deeper a page;
- every chunk returned with its text is also checked on its own stored ``access``
  (``seam.matches``), so even a stale set could only hide a chunk, never show one.

A store without a gate (an in-memory one) is read with the filter checked on each chunk's own
metadata: the unfiltered top ``max(POOL_MIN, POOL_FACTOR * n)`` kept by ``seam.matches``,
the store's filter asked when fewer than ``n`` pass. Either way a read returns what the
filtered read returns (HNSW's approximation aside).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ragingest.schema import ACCESS_KEY, PUBLIC_PRINCIPAL
from ragingest.vectorstore.access.guarded_indexes import GuardedLexical, GuardedParents
from ragingest.vectorstore.access.principals import (
    Access,
    Principals,
    access_filter,
    readable_names,
)
from ragingest.vectorstore.access.readable_ids import ReadableIds, readable
from ragingest.vectorstore.seam import (
    AllOf,
    ChunkSource,
    Condition,
    Filter,
    LexicalSearch,
    ParentSource,
    StoredChunk,
    chunks_with_dense,
    matches,
)

if TYPE_CHECKING:
    from ragingest.vectorstore.gate import ReadGate

log = logging.getLogger(__name__)

FIRST_PAGE = 16  # ids of the lexical index checked at a time, doubled while too few pass
POOL_MIN = 200  # dense hits read unfiltered at least (the collection's HNSW search_ef)
POOL_FACTOR = 3  # pool ~ 3 n readable: dense recall then an unfiltered read's (bench/README.md)
POOL_CAP = 2000  # past it the store's own filter is cheaper (it admits little)


def both(where: Filter | None, access: Filter | None) -> Filter | None:
    """``where`` AND ``access`` (either may be None)."""
    if access is None or where is None:
        return where if access is None else access
    return AllOf((where, access))


class GuardedSource:
    """Every read of ``inner`` limited to what ``principals`` may read (module docstring)."""

    def __init__(self, inner: ChunkSource, principals: Access) -> None:
        self.inner = inner
        self.principals = principals
        self.policy = inner.access_policy()
        self.access = access_filter(principals, self.policy)
        self.names = (
            readable_names(principals)
            if self.access is not None and isinstance(principals, Principals)
            else None
        )

    def unmatched(self) -> list[str]:
        """The caller's principals (``*`` aside) that no chunk's ``access`` names: a name
        spelt otherwise than the policy spells it (``group:HR`` against ``group:hr``: names
        are exact strings) reads only what is public, which looks like an answer; callers
        say so. [] without a policy filter (no policy, or ``ALL``)."""
        if self.names is None:
            return []
        return [
            name
            for name in self.names
            if name != PUBLIC_PRINCIPAL
            and not self.inner.chunk_ids(Condition(ACCESS_KEY, "$contains", name))
        ]

    def readable(self) -> ReadableIds | None:
        """The ids the caller may read, kept per write generation (None: no access filter, or
        a store without a gate to key them by)."""
        gate = self.inner.gate
        if self.names is None or gate is None:
            return None
        return readable(self.inner, gate, self.names)

    def pool(self, n: int, ids: ReadableIds) -> int | None:
        """How many unfiltered nearest chunks hold about ``POOL_FACTOR * n`` readable ones
        (None: more than ``POOL_CAP``, the store's own filter answers)."""
        share = ids.share()
        wanted = POOL_CAP + 1 if share <= 0 else math.ceil(POOL_FACTOR * n / share)
        return None if wanted > POOL_CAP else max(POOL_MIN, wanted, n)

    def lexical_page(self, want: int) -> int:
        """The first page of the lexical index to read for ``want`` admitted hits."""
        ids = self.readable()
        share = ids.share() if ids is not None else 0.0
        deeper = math.ceil(want / share) if share > 0 else want
        return max(FIRST_PAGE, want, min(deeper, 8 * max(want, FIRST_PAGE)))

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

    @property
    def chunks_with_dense(self) -> bool:
        """The inner store's, but never through kept id sets: those read ids first anyway, so
        the ranking's one fetch of the prefix it reads is the cheaper call."""
        kept_sets = self.names is not None and self.inner.gate is not None
        return chunks_with_dense(self.inner) and not kept_sets

    def access_policy(self) -> bool:
        return self.policy

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)

    def count(self) -> int:
        """The chunks the caller may read."""
        if self.access is None:
            return self.inner.count()
        ids = self.readable()
        return len(ids) if ids is not None else len(self.inner.chunk_ids(self.access))

    def nearest(
        self, vector: Sequence[float], n: int, where: Filter | None = None
    ) -> list[tuple[str, float]]:
        if self.access is None:
            return self.inner.nearest(vector, n, where)
        return self._nearest(vector, n, where, self.readable())

    def _nearest(
        self, vector: Sequence[float], n: int, where: Filter | None, ids: ReadableIds | None
    ) -> list[tuple[str, float]]:
        """``nearest`` under the access filter, with the caller's kept ids (or None)."""
        pool = max(POOL_MIN, POOL_FACTOR * n) if ids is None else self.pool(n, ids)
        if pool is not None:
            found = self.inner.nearest(vector, pool, where)
            passed = self.held([i for i, _ in found], where) if ids is None else ids
            admitted = [(i, distance) for i, distance in found if i in passed]
            if len(admitted) >= n or len(found) < pool:
                return admitted[:n]
        return self.inner.nearest(vector, n, both(where, self.access))

    def nearest_chunks(
        self, vector: Sequence[float], n: int, where: Filter | None = None
    ) -> list[tuple[StoredChunk, float]]:
        if self.access is None:
            return self.inner.nearest_chunks(vector, n, where)
        readable = self.readable()
        if readable is not None:  # ids first: n chunks sent instead of the pool
            nearest = self._nearest(vector, n, where, readable)
            by_id = {c.id: c for c in self._chunks([i for i, _ in nearest], where, readable)}
            if len(by_id) == len(nearest):  # (a chunk without text is left out, as inner's)
                return [(by_id[i], d) for i, d in nearest if by_id[i].text is not None]
            return self.inner.nearest_chunks(vector, n, both(where, self.access))
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
        return self._chunks(ids, where, self.readable())

    def _chunks(
        self, ids: Sequence[str], where: Filter | None, readable: ReadableIds | None
    ) -> list[StoredChunk]:
        """``chunks`` by ids under the access filter: the kept ids first (where there are
        some), then each chunk's own ``access``."""
        if readable is not None:
            ids = [i for i in ids if i in readable]
        if not ids or self.access is None:
            return []
        return [c for c in self.inner.chunks(ids, where) if matches(self.access, c.metadata)]

    def held(self, ids: Sequence[str], where: Filter | None = None) -> set[str]:
        if self.access is None:
            return self.inner.held(ids, where)
        readable = self.readable()
        if readable is None:
            return {chunk.id for chunk in self.chunks(ids, where)}
        kept = [i for i in ids if i in readable]
        return set(kept) if where is None or not kept else self.inner.held(kept, where)

    def chunk_ids(self, where: Filter | None = None) -> list[str]:
        return self.inner.chunk_ids(both(where, self.access))

    def vectors(self, ids: Sequence[str], where: Filter | None = None) -> dict[str, list[float]]:
        readable = self.readable() if self.access is not None else None
        if readable is None:
            return self.inner.vectors(ids, both(where, self.access))
        kept = [i for i in ids if i in readable]
        return self.inner.vectors(kept, where) if kept else {}


def say_unmatched(source: GuardedSource, collection: str) -> list[str]:
    """``source.unmatched()``, said in a warning that names ``collection`` (the command line
    shows it: a misspelt group otherwise reads as "only public answers")."""
    unmatched = source.unmatched()
    if unmatched:
        log.warning(
            "%s: no document of collection %r names %s as a reader (names are exact, "
            "case-sensitive strings), so only public documents can answer",
            ", ".join(unmatched),
            collection,
            "it" if len(unmatched) == 1 else "them",
        )
    return unmatched


def guarded(source: ChunkSource, principals: Access) -> GuardedSource:
    """``source`` read as ``principals`` (an already guarded source is unwrapped first, so a
    source is never guarded under two callers at once)."""
    if isinstance(source, GuardedSource):
        source = source.inner
    return GuardedSource(source, principals)
