"""Top-k retrieval for ``ragingest evaluate``: a fresh Chroma collection per configuration,
and for hybrid search a fresh lexical index (BM25) beside it, fused as the retriever does.

Contract of ``retrieve(chunks, vectors, queries, k, query_texts=None)``: per query, the indices
of its best ``k`` chunks, best first. Dense (``query_texts`` None): the ``k`` nearest by cosine,
ties broken by position. Hybrid: the ``k`` nearest and the ``k`` best by BM25 of the query text
over each chunk's ``embed_text`` (breadcrumb + text, the product's ``lexical_text``), fused by
``reciprocal_rank_fusion`` (rrf_k = 60), so up to ``2 k`` indices.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence

import numpy as np

from ragingest.evaluate.chunking import EvalChunk

# Cosine space as in the product, with a wider graph search: with Chroma's defaults a few % of
# the top-5 sets differed from exact search, and differently from run to run; with these, the
# top-k scores equal exact search on the Chroma eval set.
HNSW = {"hnsw:space": "cosine", "hnsw:construction_ef": 400, "hnsw:search_ef": 400}
TIE_MARGIN = 10  # extra neighbours fetched so that ties at the k-th place are seen


def _tie_key(hit: tuple[float, int]) -> tuple[float, int]:
    return round(hit[0], 6), hit[1]


def retrieve(
    chunks: Sequence[EvalChunk],
    vectors: np.ndarray,
    queries: np.ndarray,
    k: int,
    query_texts: Sequence[str] | None = None,
) -> list[list[int]]:
    """Chunk indices per query, best first (see the module docstring)."""
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    import chromadb
    from chromadb.config import Settings

    from ragingest.vectorstore.server import active_server

    server = active_server()  # --chroma-host: a throwaway collection on the server
    name = f"ragingest-evaluate-{os.getpid()}-{id(chunks)}" if server else "evaluate"
    with tempfile.TemporaryDirectory(prefix="ragingest-eval-") as folder:
        settings = Settings(anonymized_telemetry=False)
        client = server.client() if server else chromadb.PersistentClient(folder, settings)
        collection = client.create_collection(name, metadata=HNSW, embedding_function=None)
        step = client.get_max_batch_size()
        for i in range(0, len(chunks), step):
            batch = chunks[i : i + step]
            collection.add(
                ids=[str(j) for j in range(i, i + len(batch))],
                embeddings=vectors[i : i + len(batch)],
                metadatas=[
                    {"corpus_id": c.corpus_id, "start_index": c.start, "end_index": c.end}
                    for c in batch
                ],
            )
        found: list[list[int]] = []
        extra = min(k + TIE_MARGIN, len(chunks))
        for i in range(0, len(queries), 256):
            result = collection.query(
                query_embeddings=queries[i : i + 256], n_results=extra, include=["distances"]
            )
            for ids, distances in zip(result["ids"], result["distances"], strict=True):
                # equal texts have equal vectors: break ties by position, not by chance
                ranked = sorted(zip(distances, map(int, ids), strict=True), key=_tie_key)
                found.append([j for _, j in ranked[:k]])
        if query_texts is not None:
            found = _fuse(found, _lexical(chunks, query_texts, k, folder))
        if server:
            client.delete_collection(name)
        del collection, client
    return found


def _lexical(
    chunks: Sequence[EvalChunk], query_texts: Sequence[str], k: int, folder: str
) -> list[list[int]]:
    """The ``k`` best chunk indices per query by BM25, from a lexical index in ``folder``."""
    from ragingest.vectorstore.lexical import LexicalIndex

    index = LexicalIndex(folder, "evaluate")
    index.add([str(j) for j in range(len(chunks))], [c.embed_text for c in chunks])
    return [[int(i) for i, _ in index.search(text, k)] for text in query_texts]


def _fuse(dense: list[list[int]], lexical: list[list[int]]) -> list[list[int]]:
    from ragingest.vectorstore.search import reciprocal_rank_fusion

    fused = []
    for by_vector, by_words in zip(dense, lexical, strict=True):
        ranking = reciprocal_rank_fusion([list(map(str, by_vector)), list(map(str, by_words))])
        fused.append([int(i) for i, _ in ranking])
    return fused
