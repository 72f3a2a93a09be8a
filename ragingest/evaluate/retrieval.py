"""Top-k retrieval for ``ragingest evaluate``: a fresh Chroma collection per configuration."""

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
    chunks: Sequence[EvalChunk], vectors: np.ndarray, queries: np.ndarray, k: int
) -> list[list[int]]:
    """Top ``k`` chunk indices per query from a fresh Chroma collection in a temp folder."""
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
        if server:
            client.delete_collection(name)
        del collection, client
    return found
