"""``MemoryStore``: the store seam exact and in memory (the old one, until ``Collection`` over a
``MemoryIndex`` replaces it).

Contract: a ``seam.ChunkSource`` and ``seam.ChunkSink`` over a dict in this process. Search is
exact (cosine distance to every stored vector, ties by insertion order), filters are
``seam.matches``, and nothing is persisted. It holds to the same contract suite as the Chroma
store (``tests/vectorstore/test_store_contract.py``), so retrieval tested over it is
retrieval over any store that passes that suite. Parent sections go to a LangChain
``InMemoryStore``; a lexical index, when one is given, is written beside the chunks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.stores import InMemoryBaseStore

from ragingest.schema import ACCESS_KEY
from ragingest.vectorstore.access.write import parent_access, stored_access
from ragingest.vectorstore.gate import ReadGate
from ragingest.vectorstore.ids import chroma_id
from ragingest.vectorstore.lexical.index import LexicalIndex, lexical_text
from ragingest.vectorstore.seam import Filter, StoredChunk, matches


class MemoryStore:
    """Chunks, their vectors and their parents in memory (module docstring)."""

    gate: ReadGate | None = None
    remote: bool = False
    chunks_with_dense: bool = False
    policy: bool = False  # written under an access policy (Chroma: the collection's marker)

    def __init__(self, embeddings: Embeddings, lexical: LexicalIndex | None = None) -> None:
        self.embeddings = embeddings
        self.lexical = lexical
        self.parent_store: InMemoryBaseStore[Document] = InMemoryBaseStore()
        self._rows: dict[str, tuple[StoredChunk, np.ndarray]] = {}

    def add_documents(
        self,
        documents: list[Document],
        *,
        embed_texts: Sequence[str] | None = None,
        parent_texts: Sequence[str] | None = None,
        vectors: Sequence[list[float] | None] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        """Store ``documents`` as ``ChunkStore.add_documents`` does (ids given, the document's
        or its content hash; ``embed_texts`` embedded unless ``vectors`` has one; a parent
        section per ``parent_id`` with ``parent_texts``). Underscore keys are not stored."""
        ids = list(kwargs.get("ids") or [doc.id or chroma_id(doc) for doc in documents])
        texts = list(embed_texts or [doc.page_content for doc in documents])
        given = list(vectors or [None] * len(documents))
        todo = [text for text, vector in zip(texts, given, strict=True) if vector is None]
        computed = iter(self.embeddings.embed_documents(todo) if todo else [])
        for chunk_id, doc, vector in zip(ids, documents, given, strict=True):
            row = np.asarray(vector if vector is not None else next(computed), dtype=np.float64)
            meta = {k: v for k, v in doc.metadata.items() if not k.startswith("_")}
            self._rows.pop(chunk_id, None)  # an upsert moves to the end, as a new row
            self._rows[chunk_id] = (StoredChunk(chunk_id, doc.page_content, meta), row)
        if parent_texts is not None:
            from ragingest.vectorstore.records.parents import parent_documents

            self.parent_store.mset(parent_documents(documents, parent_texts))
        if self.lexical is not None:
            rows = [self._rows[i][0] for i in ids]
            self.lexical.add(ids, [lexical_text(c.text or "", c.metadata) for c in rows])
        return ids

    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> None:
        """Forget the chunks ``ids``."""
        for chunk_id in ids or []:
            self._rows.pop(chunk_id, None)
        if self.lexical is not None and ids:
            self.lexical.delete(ids)

    def set_access(self, ids: Sequence[str], access: Sequence[str]) -> None:
        """Replace the readers of the chunks ``ids`` and of their parent sections in place."""
        value = stored_access(access)
        parents = set()
        for chunk_id in ids:
            if chunk_id not in self._rows:
                continue
            chunk, row = self._rows[chunk_id]
            meta = {**chunk.metadata, ACCESS_KEY: value}
            self._rows[chunk_id] = (StoredChunk(chunk.id, chunk.text, meta), row)
            if meta.get("parent_id"):
                parents.add(str(meta["parent_id"]))
        parent_access(self.parent_store, sorted(parents), value)

    def embed_query(self, text: str) -> list[float]:
        """The query's vector."""
        return list(self.embeddings.embed_query(text))

    def count(self) -> int:
        """The number of chunks."""
        return len(self._rows)

    def lexical_in_step(self) -> bool:
        """Whether the lexical index holds as many chunks (True without one)."""
        return self.lexical is None or self.lexical.count() == self.count()

    def nearest(
        self, vector: Sequence[float], n: int, where: Filter | None = None
    ) -> list[tuple[str, float]]:
        """The ``n`` nearest admitted by ``where`` as ``(id, cosine distance)``, exact."""
        return [(chunk.id, distance) for chunk, distance in self._ranked(vector, n, where)]

    def nearest_chunks(
        self, vector: Sequence[float], n: int, where: Filter | None = None
    ) -> list[tuple[StoredChunk, float]]:
        """The ``n`` nearest with their chunks; one without text left out (as Chroma's)."""
        return [(c, d) for c, d in self._ranked(vector, n, where) if c.text is not None]

    def chunks(
        self, ids: Sequence[str] | None = None, where: Filter | None = None
    ) -> list[StoredChunk]:
        """The stored chunks among ``ids`` (None: all) that ``where`` admits."""
        wanted = self._rows if ids is None else dict.fromkeys(ids)
        keys = [i for i in wanted if i in self._rows]
        rows = (self._rows[i][0] for i in keys)
        return [chunk for chunk in rows if matches(where, chunk.metadata)]

    def held(self, ids: Sequence[str], where: Filter | None = None) -> set[str]:
        """Which of ``ids`` are stored and admitted by ``where``."""
        return {chunk.id for chunk in self.chunks(ids, where)}

    def chunk_ids(self, where: Filter | None = None) -> list[str]:
        """The ids of every chunk ``where`` admits, in insertion order."""
        return [chunk.id for chunk in self.chunks(None, where)]

    def vectors(
        self, ids: Sequence[str], where: Filter | None = None
    ) -> dict[str, list[float]]:
        """The stored vectors of the ``ids`` that ``where`` admits."""
        return {c.id: self._rows[c.id][1].tolist() for c in self.chunks(ids, where)}

    def access_policy(self) -> bool:
        """Whether the chunks were written under an access policy (``policy``)."""
        return self.policy

    def _ranked(
        self, vector: Sequence[float], n: int, where: Filter | None
    ) -> list[tuple[StoredChunk, float]]:
        query = np.asarray(vector, dtype=np.float64)
        norm = float(np.linalg.norm(query)) or 1.0
        scored = []
        for chunk, row in self._rows.values():
            if not matches(where, chunk.metadata):
                continue
            cosine = float(query @ row) / (norm * (float(np.linalg.norm(row)) or 1.0))
            scored.append((chunk, 1.0 - cosine))
        scored.sort(key=lambda pair: pair[1])  # stable: ties keep insertion order
        return scored[:n]
