"""Ranked chunks for a query: dense (similarity or MMR), lexical (BM25), or both fused.

Contract of ``rank_chunks(store, query, n, ...)``: the chunks of ``store`` (any
``vectorstore.seam.ChunkSource``) matching ``where`` (any form ``filters.as_filter`` takes),
best first, as ``ChunkHit``s whose ``document.id`` is the chunk id.

- dense: the ``n`` nearest by cosine (``search_type="similarity"``), or (``"mmr"``) the first
  ``n`` of the maximal-marginal-relevance order over the ``max(fetch_k, n)`` nearest
  (``lambda_mult``: 1 = relevance only, 0 = diversity only);
- ``hybrid``: also the ``n`` best by BM25 of the lexical index that pass ``where``, fused
  (``fusion.py``) by the weighted sum of the two lists' scores, each scaled by its own
  distribution (``fusion="dbsf"``, the dense list weighing ``dense_weight``, BM25 the rest)
  or by reciprocal rank (``"rrf"``, ``rrf_k``; also under "mmr", whose order is not its
  scores'), ties broken by dense rank. Up to ``2 n`` hits;
- every hit keeps ``dense_rank``/``dense_score`` (cosine) and ``lexical_rank``/
  ``lexical_score`` (BM25), None where it is not in that list; ``score`` is the ranking score
  (cosine for dense alone, the fused score for hybrid).

``Ranking.exhausted`` is true when no list could give more than it gave (asking for a larger
``n`` finds nothing new): the retriever's loop for exactly ``k`` stops on it.

``documents=False`` (a similarity ranking): the same hits in the same order, but Chroma is
asked for ids and distances only, and a lexical hit's chunk only for whether it is there and
passes ``where``; each ``ChunkHit.document`` stays None until ``fill_documents`` fetches it,
for the hits a caller keeps (a retriever keeps 8 of 40). It returns False when a dense hit
turns out to have no stored text, which Chroma's own search leaves out of its list: the
caller ranks again with ``documents=True``. The dense list's first ``fusion.SCALE_OVER`` hits
set a hybrid ranking's order (their ranks; for "dbsf" also the scale), so a caller fills them
too.

``lexical_page(store, query, n, where, documents)``: the lexical index's first ``n`` and which
of them Chroma holds under ``where`` (with their chunks when ``documents``), the part of a
hybrid search that needs no query vector: a caller runs it beside the query's embedding and
hands it to ``rank_chunks`` as ``lexical_first`` (same ``n``, ``where`` and ``documents``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from langchain_core.documents import Document
from langchain_core.vectorstores.utils import maximal_marginal_relevance

from ragingest.defaults import (
    DENSE_WEIGHT,
    FUSION,
    LAMBDA_MULT,
    MIN_CANDIDATES,
    SEARCH_TYPE,
    SEARCH_TYPES,
    Fusion,
    SearchType,
)
from ragingest.retrieval.filters import Where, as_filter
from ragingest.retrieval.fusion import RRF_K, check_fusion, fuse
from ragingest.vectorstore.seam import ChunkSource, Filter


def candidate_depth(k: int) -> int:
    """How deep each ranking is read for a top ``k``: ``max(20, 4 k)``. Deduplication, parent
    expansion and fusion each need more candidates than the ``k`` kept; the CLI's ``query``,
    ``ragingest.retriever``, the context retriever and ``evaluate`` all rank this deep, so
    they agree for every ``k``."""
    return max(MIN_CANDIDATES, 4 * k)


@dataclass
class ChunkHit:
    """One ranked chunk: the stored document, its final score, and its dense and lexical ranks
    and scores where it had them."""

    chunk_id: str  # the Chroma id
    document: Document | None  # the stored chunk (None until ``fill_documents``)
    score: float
    dense_rank: int | None = None
    dense_score: float | None = None
    lexical_rank: int | None = None
    lexical_score: float | None = None

    @property
    def chunk(self) -> Document:
        """The stored chunk: a ranking's with ``documents=True``, or after ``fill_documents``."""
        if self.document is None:
            raise LookupError(f"chunk {self.chunk_id!r} was ranked without its text")
        return self.document


@dataclass
class Ranking:
    """The hits of one search in rank order; ``exhausted`` when the collection has no more to
    give."""

    hits: list[ChunkHit]
    exhausted: bool


def rank_chunks(
    store: ChunkSource,
    query: str,
    n: int,
    *,
    where: Where | Filter = None,
    hybrid: bool,
    search_type: SearchType = SEARCH_TYPE,
    fetch_k: int = MIN_CANDIDATES,
    lambda_mult: float = LAMBDA_MULT,
    fusion: Fusion = FUSION,
    dense_weight: float = DENSE_WEIGHT,
    rrf_k: int = RRF_K,
    query_vector: list[float] | None = None,
    lexical_first: LexicalPage | None = None,
    documents: bool = True,
) -> Ranking:
    """The best chunks for ``query`` (see the module docstring). ``query_vector``: the
    query's embedding, when computed already; ``lexical_first``: ``lexical_page(store, query,
    n, where, documents)``, when searched already (beside the embedding); ``documents=False``:
    hits without their chunks (module docstring; "mmr" fetches them whatever it says).
    ``hybrid`` has no default: each caller states it (``defaults.HYBRID`` for a reader's)."""
    if search_type not in SEARCH_TYPES:
        raise ValueError(f"search_type must be 'similarity' or 'mmr', not {search_type!r}")
    check_fusion(fusion, dense_weight)
    flt = as_filter(where)
    vector = query_vector if query_vector is not None else store.embed_query(query)
    dense: list[tuple[str, float, Document | None]]
    if search_type == "mmr":
        chosen, dense_done = _mmr(store, vector, n, max(fetch_k, n), lambda_mult, flt)
        dense = [(str(doc.id), cosine, doc) for doc, cosine in chosen]
    else:
        # the collection is in cosine space: distance = 1 - cosine
        if documents:
            found = store.nearest_chunks(vector, n, flt)
            dense = [(chunk.id, 1.0 - distance, chunk.document()) for chunk, distance in found]
        else:
            nearest = store.nearest(vector, n, flt)
            dense = [(chunk_id, 1.0 - distance, None) for chunk_id, distance in nearest]
        dense_done = len(dense) < n
    hits = {
        chunk_id: ChunkHit(chunk_id, doc, cosine, dense_rank=rank, dense_score=cosine)
        for rank, (chunk_id, cosine, doc) in enumerate(dense, 1)
    }
    if not hybrid:
        return Ranking(list(hits.values()), dense_done)
    lexical, lexical_done = lexical_ranked(
        store, query, n, flt, first=lexical_first, known=set(hits), documents=documents
    )
    for rank, (chunk_id, bm25, doc) in enumerate(lexical, 1):
        hit = hits.setdefault(chunk_id, ChunkHit(chunk_id, doc, 0.0))
        hit.lexical_rank, hit.lexical_score = rank, bm25
    by_vector, by_words = ([(i, score) for i, score, _ in ranking] for ranking in (dense, lexical))
    order = "rrf" if search_type == "mmr" else fusion  # an MMR order is not its cosines' order
    fused = fuse(by_vector, by_words, order, dense_weight, rrf_k)
    out = []
    for chunk_id, score in fused:
        hits[chunk_id].score = score
        out.append(hits[chunk_id])
    return Ranking(out, dense_done and lexical_done)


def fill_documents(store: ChunkSource, hits: list[ChunkHit]) -> bool:
    """Give each of ``hits`` without its chunk the stored one (one read; the hits came
    from one ranking under the same read, so each is there and passes its filter). False
    when a dense hit has no stored text: a ranking with ``documents=True`` leaves it out."""
    wanted = [hit.chunk_id for hit in hits if hit.document is None]
    if not wanted:
        return True
    found = {chunk.id: chunk for chunk in store.chunks(wanted)}
    for hit in hits:
        if hit.document is not None:
            continue
        chunk = found.get(hit.chunk_id)
        if chunk is None or (chunk.text is None and hit.dense_rank is not None):
            return False
        hit.document = chunk.document()
    return True


@dataclass
class LexicalPage:
    """The lexical index's first ``len(found)`` hits for a query and which of them Chroma holds
    under the ``where`` they were checked with (``held``); ``chunks``: the held ones' stored
    chunks, when they were asked for (``lexical_page``)."""

    found: list[tuple[str, float]]
    held: set[str]
    chunks: dict[str, Document]


def lexical_page(
    store: ChunkSource, query: str, n: int, where: Where | Filter = None, documents: bool = False
) -> LexicalPage:
    """The lexical index's ``n`` best ``(id, bm25)`` for ``query`` (none without an index),
    checked against Chroma under ``where`` in one get, with their chunks when ``documents``:
    what a hybrid search needs before the query vector (module docstring)."""
    index = store.lexical
    found = [] if index is None else index.search(query, n, 0)
    held, chunks = _held(store, [i for i, _ in found], as_filter(where), documents)
    return LexicalPage(found, held, chunks)


def _held(
    store: ChunkSource, ids: list[str], where: Filter | None, documents: bool
) -> tuple[set[str], dict[str, Document]]:
    """Which of ``ids`` the store holds under ``where``, and (``documents``) their chunks."""
    if not ids:
        return set(), {}
    if not documents:
        return store.held(ids, where), {}
    chunks = {chunk.id: chunk.document() for chunk in store.chunks(ids, where)}
    return set(chunks), chunks


def lexical_ranked(
    store: ChunkSource,
    query: str,
    n: int,
    where: Filter | None = None,
    *,
    first: LexicalPage | None = None,
    known: set[str] | None = None,
    documents: bool = True,
) -> tuple[list[tuple[str, float, Document | None]], bool]:
    """The ``n`` best chunks by BM25 that Chroma holds and ``where`` admits, as
    ``(chroma id, bm25, Document)`` best first, and whether the index has no more. Ids the
    index holds but Chroma does not (a write cut short) are skipped. ``first``: the first page
    (``lexical_page`` with ``n``, ``where`` and ``documents``), searched and checked already;
    ``known``: ids at hand that pass ``where`` (the dense hits), not asked of Chroma again
    (their Document is None). ``documents=False``: Chroma is asked which ids it holds, not for
    their chunks (every Document None)."""
    index = store.lexical
    if index is None:
        return [], True
    known = known or set()
    out: list[tuple[str, float, Document | None]] = []
    offset, page = 0, n
    if first is None:
        found = index.search(query, page, offset)
        checked, chunks = _held(store, [i for i, _ in found if i not in known], where, documents)
    else:
        found, checked, chunks = first.found, first.held, dict(first.chunks)
    held = known | checked
    while True:
        offset += len(found)
        out.extend((i, s, chunks.get(i)) for i, s in found if i in held)
        if len(found) < page:
            return out[:n], True
        if len(out) >= n:
            return out[:n], False
        page *= 2  # ``where`` or a cut-short write skipped some: read deeper
        found = index.search(query, page, offset)
        more, fetched = _held(store, [i for i, _ in found if i not in known], where, documents)
        held |= more
        chunks |= fetched


def _mmr(
    store: ChunkSource,
    vector: list[float],
    n: int,
    pool: int,
    lambda_mult: float,
    where: Filter | None,
) -> tuple[list[tuple[Document, float]], bool]:
    found = store.nearest_chunks(vector, pool, where)
    if not found:
        return [], True
    by_id = store.vectors([chunk.id for chunk, _ in found])
    embeddings = [by_id[chunk.id] for chunk, _ in found]
    order = maximal_marginal_relevance(
        np.array(vector, dtype=np.float32), embeddings, lambda_mult=lambda_mult, k=n
    )
    chosen = [(found[i][0].document(), 1.0 - float(found[i][1])) for i in order]
    return chosen, len(found) < pool and len(chosen) == len(found)
