"""Test doubles for the embedding model: deterministic vectors, the same on every machine.

Real-model floats differ between CPUs and thread counts, so exact orders and exact metric values
are asserted over these: ``HashedWordEmbeddings`` is a bag of hashed words (a LangChain
``Embeddings``), and ``FakeEmbeddingCache`` is it behind ``ragingest evaluate``'s
``EmbeddingCache`` interface (the ``cache`` parameter of ``evaluate``)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np
from langchain_core.embeddings import Embeddings


class HashedWordEmbeddings(Embeddings):
    """Unit vectors of word counts, each lowercased word (``pattern``'s matches) hashed to one
    of ``dimensions`` axes: texts sharing no word have cosine 0, equal texts cosine 1, and a
    text without any word the zero vector. Queries and documents are embedded alike."""

    def __init__(self, dimensions: int = 1024, pattern: str = r"\w+") -> None:
        self.dimensions = dimensions
        self.pattern = re.compile(pattern)

    def vector(self, text: str) -> np.ndarray:
        row = np.zeros(self.dimensions, dtype=np.float32)
        for word in self.pattern.findall(text.lower()):
            digest = hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()
            row[int.from_bytes(digest, "little") % self.dimensions] += 1.0
        norm = float(np.linalg.norm(row))
        return row / norm if norm else row

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.vector(t).tolist() for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.vector(text).tolist()


class FakeEmbeddingCache:
    """``evaluate.cache.EmbeddingCache``'s interface over ``embeddings`` (no model, no SQLite):
    ``embed`` and ``queries`` return one row per text; ``computed`` counts them."""

    def __init__(self, embeddings: HashedWordEmbeddings) -> None:
        self.embeddings = embeddings
        self.computed = 0
        self.seconds = 0.0

    def embed(self, texts: Sequence[str], role: str = "document") -> np.ndarray:
        self.computed += len(texts)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self.embeddings.vector(t) for t in texts])

    def queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed(texts, "query")
