"""The search behind ``ragingest.retriever`` (``heading_first.HeadingFirstRetriever``).

Search the small chunks, give the model their parent section; never fill the top k with
copies of the same text (overlap makes neighbours look alike).

Contract of ``ChunkRetriever.invoke(query, k=None)`` (and ``ainvoke``; ``k`` for this call
only, as LangChain's ``VectorStoreRetriever`` takes it; any other keyword is a TypeError):
chunks are ranked by ``search.rank_chunks`` (``search_type`` "similarity" or "mmr", ``hybrid``
adds BM25 fused by ``fusion``, ``where`` filters). With ``parents``, each is replaced by
its parent section from the docstore beside Chroma (the chunk itself when the parent is
missing). With ``dedup``, a candidate that overlaps one already taken from the same file is
merged into it (the union of the two spans, rebuilt exactly from their offsets), and one whose
text a taken one already holds, or nearly repeats (another copy of the file), is dropped. The
candidate pool starts at ``fetch_k`` and doubles until ``k`` passages remain or the collection
has no more: exactly ``k`` Documents come back whenever the collection (under ``where``) has
``k`` distinct passages, best first. Each has ``id`` = the Chroma id of its best chunk
(``store.get_by_ids([doc.id])`` returns that chunk), ``start_index``/``end_index`` of the
returned span, ``score`` (the best chunk's: cosine, or the fused score with ``hybrid``),
``dense_rank``/``lexical_rank`` and ``dense_score``/``lexical_score`` where the passage was in
that list, ``chunk_ids`` (Chroma ids of the chunks that matched) and ``expanded`` (a parent was
returned). ``passages(query)`` returns the same as ``Span``s, for code that needs more.

Threads may share a retriever. The query's embedding waits for one of the process's
``os.cpu_count()`` embedding slots, first come first served (``admission.EMBEDDING_GATE``):
one embedding's ONNX threads already use every core, so more at once only finish later
together. The slot is taken before the read gate (a query waiting for it holds no lock a
writer waits for) and given back once the vector and the lexical search are in: the lexical
search and its check against Chroma (``search.lexical_page``) run beside the embedding on a
pool thread. Chroma calls per query: embedded, that check (ids only), the dense top ``n``
(ids and distances) and one get of the prefix ``select`` reads; against a server, where each
call is a round trip, the check brings the lexical hits' chunks and the dense search its own,
so no call follows the dense search.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from pydantic import ConfigDict, PrivateAttr

from ragingest.defaults import (
    DENSE_WEIGHT,
    FUSION,
    HYBRID,
    LAMBDA_MULT,
    MIN_CANDIDATES,
    SEARCH_TYPE,
    TOP_K,
    Fusion,
)
from ragingest.retrieval import admission
from ragingest.retrieval.filters import Where, as_filter
from ragingest.retrieval.fusion import RRF_K, SCALE_OVER
from ragingest.retrieval.passages import Span, as_document, select, span_of
from ragingest.retrieval.search import (
    ChunkHit,
    LexicalPage,
    Ranking,
    SearchType,
    fill_documents,
    lexical_page,
    rank_chunks,
)
from ragingest.retrieval.sync_retriever import SyncRetriever
from ragingest.vectorstore.gate import reading
from ragingest.vectorstore.seam import ChunkSource, Filter, ParentSource, chunks_with_dense

__all__ = ["ChunkRetriever", "Span", "select"]

_POOLS: dict[int, ThreadPoolExecutor] = {}  # by process: a forked child makes its own
_POOLS_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    """The threads that run lexical searches beside query embeddings (SQLite and PostgreSQL
    drivers release the GIL while they work)."""
    with _POOLS_LOCK:
        pool = _POOLS.get(os.getpid())
        if pool is None:
            pool = ThreadPoolExecutor(max_workers=16, thread_name_prefix="ragingest-lexical")
            _POOLS[os.getpid()] = pool
        return pool


class ChunkRetriever(SyncRetriever):
    """Parent expansion, de-duplication, metadata filters, hybrid search and exactly ``k``
    over any ``vectorstore.seam.ChunkSource`` (see the module docstring)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    store: ChunkSource
    parent_store: ParentSource | None = None
    k: int = TOP_K
    fetch_k: int = MIN_CANDIDATES
    parents: bool = True
    dedup: bool = True
    where: Where | Filter = None
    search_type: SearchType = SEARCH_TYPE
    lambda_mult: float = LAMBDA_MULT
    hybrid: bool = HYBRID
    fusion: Fusion = FUSION
    dense_weight: float = DENSE_WEIGHT
    rrf_k: int = RRF_K
    _with_chunks: bool | None = PrivateAttr(default=None)  # store.chunks_with_dense

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, k: int | None = None
    ) -> list[Document]:
        return [as_document(span) for span in self.passages(query, k=k)]

    def passages(self, query: str, k: int | None = None) -> list[Span]:
        """The ``k`` passages for ``query`` (``k``: this call's, else the retriever's), best
        first (see the module docstring)."""
        k = self.k if k is None else k
        if k <= 0:
            return []
        where = as_filter(self.where)
        n = max(k, self.fetch_k)
        vector = None
        while True:
            slot = vector is None
            if slot:  # taken before the read gate: a query queued for a slot holds no lock
                admission.EMBEDDING_GATE.acquire()  # that a writer waits for
            try:
                with reading(self.store):  # a write group is seen whole or not at all
                    documents = self._chunks_with_dense()
                    if vector is None:
                        try:
                            vector, first = self._embed_and_search(query, n, where, documents)
                        finally:
                            slot = False
                            admission.EMBEDDING_GATE.release()
                    else:
                        first = None
                    ranking = self._ranking(query, vector, where, n, first, documents=documents)
                    chosen = self._choose(ranking.hits, k)
                    if chosen is None:  # a chunk without text: ranked as Chroma's search ranks
                        ranking = self._ranking(query, vector, where, n, None, documents=True)
                        chosen = self._choose(ranking.hits, k) or []
            finally:
                if slot:  # the read gate failed before the embedding
                    admission.EMBEDDING_GATE.release()
            if len(chosen) >= k or ranking.exhausted:
                return chosen
            n *= 2

    def _embed_and_search(
        self, query: str, n: int, where: Filter | None, documents: bool
    ) -> tuple[list[float], LexicalPage | None]:
        """The query's vector and, for hybrid search, the lexical index's first ``n`` checked
        against Chroma (``search.lexical_page``): searched on another thread while the model
        embeds (the model, SQLite and Chroma release the GIL)."""
        if not self.hybrid:
            return self._embed(query), None
        lexical = _pool().submit(lexical_page, self.store, query, n, where, documents)
        try:
            vector = self._embed(query)
        finally:
            first = lexical.result()
        return vector, first

    def _embed(self, query: str) -> list[float]:
        """The query's vector (the caller holds one of the process's embedding slots,
        ``admission``: first come, first served)."""
        return self.store.embed_query(query)

    def _ranking(
        self,
        query: str,
        vector: list[float],
        where: Filter | None,
        n: int,
        first: LexicalPage | None,
        documents: bool,
    ) -> Ranking:
        """The ranked hits; with ``documents=False`` without their chunks, which ``_choose``
        fetches for the prefix it reads (``search.fill_documents``)."""
        return rank_chunks(
            self.store,
            query,
            n,
            where=where,
            hybrid=self.hybrid,
            search_type=self.search_type,
            fetch_k=self.fetch_k,
            lambda_mult=self.lambda_mult,
            fusion=self.fusion,
            dense_weight=self.dense_weight,
            rrf_k=self.rrf_k,
            query_vector=vector,
            lexical_first=first,
            documents=documents,
        )

    def _chunks_with_dense(self) -> bool:
        """Whether the ranking brings the chunks (``store.chunks_with_dense``: a Chroma
        server, where each call is a round trip: the dense search's come with it, the lexical
        hits' with their check beside the embedding, so no call follows the dense search); an
        embedded store spends more on converting chunks than on a call, and a guarded read
        goes ids first, so those rank ids and fetch the prefix ``_choose`` reads."""
        if self._with_chunks is None:
            self._with_chunks = chunks_with_dense(self.store)
        return self._with_chunks

    def _choose(self, hits: list[ChunkHit], k: int) -> list[Span] | None:
        """``select`` over the ranked hits, parent-expanded, fetching chunks and parents for
        a growing prefix only: ``select`` stops at the ``k``-th passage it keeps, so a prefix
        that gives ``k`` gives what the whole list would. None when a dense hit has no stored
        text (``search.fill_documents``)."""
        parents: dict[str, Document | None] = {}
        size = min(len(hits), 2 * k)
        # a hybrid ranking's order depends on the dense head (its ranks, and its scale for
        # dbsf): a chunk of it without text sends the ranking back though the prefix misses it
        deep = hits[size:] if self.hybrid else []
        head = [h for h in deep if h.dense_rank is not None and h.dense_rank <= SCALE_OVER]
        while True:
            if not fill_documents(self.store, [*hits[:size], *head]):
                return None
            head = []
            candidates = [span_of(hit) for hit in hits[:size]]  # fresh: select merges in place
            if self.parents and self.parent_store is not None:
                candidates = self._expand(candidates, parents)
            chosen = select(candidates, k, self.dedup)
            if len(chosen) >= k or size >= len(hits):
                return chosen
            size *= 2

    def _expand(self, candidates: list[Span], parents: dict[str, Document | None]) -> list[Span]:
        """Each candidate as its parent section; ``parents`` caches the fetched ones."""
        keys = [str(c.metadata.get("parent_id", "")) for c in candidates]
        wanted = sorted({k for k in keys if k and k not in parents})
        if wanted and self.parent_store is not None:
            parents.update(zip(wanted, self.parent_store.mget(wanted), strict=True))
        out: list[Span] = []
        for candidate, key in zip(candidates, keys, strict=True):
            parent = parents.get(key)
            start = candidate.metadata.get("parent_start")
            end = candidate.metadata.get("parent_end")
            if parent is None or start is None or end is None:
                out.append(candidate)
                continue
            span = (int(start), int(end))
            chunk = (candidate.metadata.get("start_index"), candidate.metadata.get("end_index"))
            candidate.start, candidate.end = span
            candidate.text = parent.page_content
            candidate.expanded = span != chunk
            out.append(candidate)
        return out
