"""Top-k retrieval for ``ragingest evaluate``: exact cosine search over each configuration's
vectors, and for hybrid search a fresh lexical index (BM25) beside them, fused as the
retriever does.

Contract of ``retrieve(chunks, vectors, queries, k, query_texts=None)``: per query, the indices
of its best ``k`` chunks, best first. Dense (``query_texts`` None): the ``k`` nearest by cosine
(exact, so the same input always gives the same ranking), ties broken by position. Hybrid: the
``k`` nearest and the ``k`` best by BM25 of the query text over each chunk's ``embed_text``
(breadcrumb + text, the product's ``lexical_text``), fused as ``fusion`` says (the
retriever's choices, ``retrieval.fusion``: distribution-scaled scores, the dense list weighing
``DENSE_WEIGHT``, or reciprocal ranks, rrf_k = 60), so up to ``2 k`` indices.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence

import numpy as np

from ragingest.defaults import FUSION, Fusion
from ragingest.evaluate.chunking import EvalChunk
from ragingest.retrieval.fusion import fuse
from ragingest.vectorstore.lexical.index import LexicalIndex

# Exact search instead of a Chroma collection: an HNSW graph built anew per configuration
# moved whole rows of the table by up to 0.9 R@5 points between identical runs.
SCORE_DECIMALS = 6  # equal texts have equal vectors: scores this close tie, broken by position


def nearest(vectors: np.ndarray, queries: np.ndarray, k: int) -> list[list[int]]:
    """Per query, the indices of the ``k`` rows of ``vectors`` with the highest cosine, best
    first; scores equal to ``SCORE_DECIMALS`` places rank by index."""
    return [[i for i, _ in row] for row in nearest_scored(vectors, queries, k)]


def nearest_scored(
    vectors: np.ndarray, queries: np.ndarray, k: int
) -> list[list[tuple[int, float]]]:
    """``nearest`` with each hit's cosine (rounded to ``SCORE_DECIMALS``)."""
    if len(vectors) == 0:
        return [[] for _ in range(len(queries))]
    rows = np.asarray(vectors, dtype=np.float64)
    rows = rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
    found: list[list[tuple[int, float]]] = []
    for i in range(0, len(queries), 256):
        batch = np.asarray(queries[i : i + 256], dtype=np.float64)
        batch = batch / np.maximum(np.linalg.norm(batch, axis=1, keepdims=True), 1e-12)
        scores = np.round(batch @ rows.T, SCORE_DECIMALS)
        positions = np.arange(len(rows))
        for row in scores:
            order = np.lexsort((positions, -row))[:k]  # last key first: score, then position
            found.append([(int(j), float(row[j])) for j in order])
    return found


def retrieve(
    chunks: Sequence[EvalChunk],
    vectors: np.ndarray,
    queries: np.ndarray,
    k: int,
    query_texts: Sequence[str] | None = None,
    fusion: Fusion = FUSION,
) -> list[list[int]]:
    """Chunk indices per query, best first (see the module docstring)."""
    dense = nearest_scored(vectors, queries, min(k, len(chunks)))
    if query_texts is None:
        return [[i for i, _ in row] for row in dense]
    with tempfile.TemporaryDirectory(prefix="ragingest-eval-") as folder:
        lexical = _lexical(chunks, query_texts, k, folder)
    fused = []
    for lists in zip(dense, lexical, strict=True):
        by_vector, by_words = ([(str(i), score) for i, score in ranking] for ranking in lists)
        fused.append([int(i) for i, _ in fuse(by_vector, by_words, fusion)])
    return fused


def _lexical(
    chunks: Sequence[EvalChunk], query_texts: Sequence[str], k: int, folder: str
) -> list[list[tuple[int, float]]]:
    """The ``k`` best chunk indices per query by BM25, with their scores, from a lexical index
    in ``folder``."""
    index = LexicalIndex(folder, "evaluate")
    index.add([str(j) for j in range(len(chunks))], [c.embed_text for c in chunks])
    return [[(int(i), score) for i, score in index.search(text, k)] for text in query_texts]
