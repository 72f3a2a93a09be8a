"""Ranked chunks for a query: dense (similarity or MMR), lexical (BM25), or both fused.

Contract of ``rank_chunks(store, query, n, ...)``: the chunks of ``store`` (a ``ChunkStore``)
matching ``where`` (any form ``filters.chroma_where`` takes), best first, as ``ChunkHit``s
whose ``document.id`` is the Chroma id.

- dense: the ``n`` nearest by cosine (``search_type="similarity"``), or (``"mmr"``) the first
  ``n`` of the maximal-marginal-relevance order over the ``max(fetch_k, n)`` nearest
  (``lambda_mult``: 1 = relevance only, 0 = diversity only);
- ``hybrid``: also the ``n`` best by BM25 of the lexical index that pass ``where``, fused by
  reciprocal rank fusion: ``score = sum(1 / (rrf_k + rank))`` over the lists a chunk is in
  (Cormack et al. 2009, ``rrf_k`` = 60), ties broken by dense rank. Up to ``2 n`` hits;
- every hit keeps ``dense_rank``/``dense_score`` (cosine) and ``lexical_rank``/
  ``lexical_score`` (BM25), None where it is not in that list; ``score`` is the ranking score
  (cosine for dense alone, the fused score for hybrid).

``Ranking.exhausted`` is true when no list could give more than it gave (asking for a larger
``n`` finds nothing new): the retriever's loop for exactly ``k`` stops on it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from langchain_core.documents import Document

from ragingest.defaults import SEARCH_TYPES, SearchType
from ragingest.retrieval.filters import Where, chroma_where

RRF_K = 60
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
    document: Document  # the stored chunk; document.id = its Chroma id
    score: float
    dense_rank: int | None = None
    dense_score: float | None = None
    lexical_rank: int | None = None
    lexical_score: float | None = None


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
    rrf_k: int = RRF_K,
    query_vector: list[float] | None = None,
    lexical_first: list[tuple[str, float]] | None = None,
) -> Ranking:
    """The best chunks for ``query`` (see the module docstring). ``query_vector``: the
    query's embedding, when computed already; ``lexical_first``: ``lexical_page(store,
    query, n)``, when searched already (beside the embedding)."""
    if search_type not in SEARCH_TYPES:
        raise ValueError(f"search_type must be 'similarity' or 'mmr', not {search_type!r}")
    flt = chroma_where(where)
    vector = query_vector if query_vector is not None else store.embeddings.embed_query(query)
    if search_type == "mmr":
        dense, dense_done = _mmr(store, vector, n, max(fetch_k, n), lambda_mult, flt)
    else:
        found = store.similarity_search_by_vector_with_relevance_scores(vector, k=n, filter=flt)
        # the collection is in cosine space: distance = 1 - cosine
        dense = [(doc, 1.0 - float(distance)) for doc, distance in found]
        dense_done = len(dense) < n
    hits = {
        doc.id: ChunkHit(doc, cosine, dense_rank=rank, dense_score=cosine)
        for rank, (doc, cosine) in enumerate(dense, 1)
    }
    if not hybrid:
        return Ranking(list(hits.values()), dense_done)
    lexical, lexical_done = lexical_hits(
        store, query, n, flt, first=lexical_first, known={str(d.id): d for d, _ in dense}
    )
    for rank, (doc, bm25) in enumerate(lexical, 1):
        hit = hits.setdefault(doc.id, ChunkHit(doc, 0.0))
        hit.lexical_rank, hit.lexical_score = rank, bm25
    fused = reciprocal_rank_fusion(
        [[str(doc.id) for doc, _ in dense], [str(doc.id) for doc, _ in lexical]], rrf_k
    )
    out = []
    for chunk_id, score in fused:
        hits[chunk_id].score = score
        out.append(hits[chunk_id])
    return Ranking(out, dense_done and lexical_done)


def reciprocal_rank_fusion(
    rankings: list[list[str]], rrf_k: int = RRF_K
) -> list[tuple[str, float]]:
    """Fuse rankings (ids, best first) into one: ``score = sum(1 / (rrf_k + rank))`` over
    the rankings an id is in (rank from 1), best first; ties go to the better rank in the
    first ranking, then the next. Usable on any ids (``ragingest evaluate``'s chunks too)."""
    scores: dict[str, float] = {}
    ranks: dict[str, list[float]] = {}
    for position, ranking in enumerate(rankings):
        for rank, key in enumerate(ranking, 1):
            best = ranks.setdefault(key, [math.inf] * len(rankings))
            if best[position] != math.inf:
                continue  # an id twice in one ranking counts once, at its best rank
            best[position] = rank
            scores[key] = scores.get(key, 0.0) + 1.0 / (rrf_k + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], *ranks[item[0]]))


def lexical_hits(
    store: Any,
    query: str,
    n: int,
    where: dict[str, Any] | None = None,
    *,
    first: list[tuple[str, float]] | None = None,
    known: dict[str, Document] | None = None,
) -> tuple[list[tuple[Document, float]], bool]:
    """The ``n`` best chunks by BM25 that Chroma holds and ``where`` admits, as
    ``(Document, bm25)`` best first, and whether the index has no more. Ids the index holds
    but Chroma does not (a write cut short) are skipped. ``first``: the index's first ``n``
    (``lexical_page``), searched already; ``known``: chunks at hand that pass ``where`` (the
    dense hits), by id, not fetched from Chroma again."""
    index = getattr(store, "lexical", None)
    if index is None:
        return [], True
    known = known or {}
    out: list[tuple[Document, float]] = []
    offset, page = 0, n
    found = first if first is not None else index.search(query, page, offset)
    while True:
        offset += len(found)
        wanted = [i for i, _ in found if i not in known]
        docs = dict(known)
        if wanted:
            got = store.get(ids=wanted, where=where, include=["documents", "metadatas"])
            docs |= {
                i: Document(page_content=t or "", metadata=m or {}, id=i)
                for i, t, m in zip(got["ids"], got["documents"], got["metadatas"], strict=True)
            }
        out.extend((docs[i], s) for i, s in found if i in docs)
        if len(found) < page:
            return out[:n], True
        if len(out) >= n:
            return out[:n], False
        page *= 2  # ``where`` or a cut-short write skipped some: read deeper
        found = index.search(query, page, offset)


def lexical_page(store: Any, query: str, n: int) -> list[tuple[str, float]]:
    """The lexical index's ``n`` best ``(id, bm25)`` for ``query`` (none without an index):
    the part of a hybrid search that needs no query vector, so it can run beside the
    embedding."""
    index = getattr(store, "lexical", None)
    return [] if index is None else index.search(query, n, 0)


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
