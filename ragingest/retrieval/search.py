"""Ranked chunks for a query: dense (similarity or MMR), lexical (BM25), or both fused.

Contract of ``rank_chunks(store, query, n, ...)``: the chunks of ``store`` (a ``ChunkStore``)
matching ``where`` (any form ``filters.chroma_where`` takes), best first, as ``ChunkHit``s
whose ``document.id`` is the Chroma id.

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
from typing import Any

import numpy as np
from langchain_core.documents import Document

from ragingest.defaults import DENSE_WEIGHT, FUSION, SEARCH_TYPES, Fusion, SearchType
from ragingest.retrieval.filters import Where, chroma_where
from ragingest.retrieval.fusion import RRF_K, check_fusion, fuse

MIN_CANDIDATES = 20


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
    store: Any,
    query: str,
    n: int,
    *,
    where: Where = None,
    hybrid: bool = False,
    search_type: SearchType = "similarity",
    fetch_k: int = 20,
    lambda_mult: float = 0.5,
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
    hits without their chunks (module docstring; "mmr" fetches them whatever it says)."""
    if search_type not in SEARCH_TYPES:
        raise ValueError(f"search_type must be 'similarity' or 'mmr', not {search_type!r}")
    check_fusion(fusion, dense_weight)
    flt = chroma_where(where)
    vector = query_vector if query_vector is not None else store.embeddings.embed_query(query)
    dense: list[tuple[str, float, Document | None]]
    if search_type == "mmr":
        chosen, dense_done = _mmr(store, vector, n, max(fetch_k, n), lambda_mult, flt)
        dense = [(str(doc.id), cosine, doc) for doc, cosine in chosen]
    else:
        # the collection is in cosine space: distance = 1 - cosine
        if documents:
            found = store.similarity_search_by_vector_with_relevance_scores(vector, k=n, filter=flt)
            dense = [(str(doc.id), 1.0 - float(distance), doc) for doc, distance in found]
        else:
            nearest = store.nearest_ids(vector, n, flt)
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


def fill_documents(store: Any, hits: list[ChunkHit]) -> bool:
    """Give each of ``hits`` without its chunk the stored one (one Chroma get; the hits came
    from one ranking under the same read, so each is there and passes its filter). False
    when a dense hit has no stored text: a ranking with ``documents=True`` leaves it out."""
    wanted = [hit.chunk_id for hit in hits if hit.document is None]
    if not wanted:
        return True
    got = store.get(ids=wanted, include=["documents", "metadatas"])
    found = dict(zip(got["ids"], zip(got["documents"], got["metadatas"], strict=True), strict=True))
    for hit in hits:
        if hit.document is not None:
            continue
        text, metadata = found.get(hit.chunk_id, (None, None))
        if text is None and (hit.dense_rank is not None or hit.chunk_id not in found):
            return False
        hit.document = Document(page_content=text or "", metadata=metadata or {}, id=hit.chunk_id)
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
    store: Any, query: str, n: int, where: Where = None, documents: bool = False
) -> LexicalPage:
    """The lexical index's ``n`` best ``(id, bm25)`` for ``query`` (none without an index),
    checked against Chroma under ``where`` in one get, with their chunks when ``documents``:
    what a hybrid search needs before the query vector (module docstring)."""
    index = getattr(store, "lexical", None)
    found = [] if index is None else index.search(query, n, 0)
    held, chunks = _held(store, [i for i, _ in found], chroma_where(where), documents)
    return LexicalPage(found, held, chunks)


def _held(
    store: Any, ids: list[str], where: dict[str, Any] | None, documents: bool
) -> tuple[set[str], dict[str, Document]]:
    """Which of ``ids`` Chroma holds under ``where``, and (``documents``) their chunks."""
    if not ids:
        return set(), {}
    include = ["documents", "metadatas"] if documents else []
    got = store.get(ids=ids, where=where, include=include)
    if not documents:
        return set(got["ids"]), {}
    rows = zip(got["ids"], got["documents"], got["metadatas"], strict=True)
    chunks = {i: Document(page_content=t or "", metadata=m or {}, id=i) for i, t, m in rows}
    return set(chunks), chunks


def lexical_ranked(
    store: Any,
    query: str,
    n: int,
    where: dict[str, Any] | None = None,
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
    index = getattr(store, "lexical", None)
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
    store: Any,
    vector: list[float],
    n: int,
    pool: int,
    lambda_mult: float,
    where: dict[str, Any] | None,
) -> tuple[list[tuple[Document, float]], bool]:
    from langchain_chroma.vectorstores import maximal_marginal_relevance

    found = store.similarity_search_by_vector_with_relevance_scores(vector, k=pool, filter=where)
    if not found:
        return [], True
    ids = [doc.id for doc, _ in found]
    got = store.get(ids=ids, include=["embeddings"])
    by_id = dict(zip(got["ids"], got["embeddings"], strict=True))
    embeddings = [by_id[i] for i in ids]
    order = maximal_marginal_relevance(
        np.array(vector, dtype=np.float32), embeddings, lambda_mult=lambda_mult, k=n
    )
    chosen = [(found[i][0], 1.0 - float(found[i][1])) for i in order]
    return chosen, len(found) < pool and len(chosen) == len(found)
