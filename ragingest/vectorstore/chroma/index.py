"""``ChromaIndex``: the store port's ``DenseIndex`` over one chromadb collection.

Contract: ``port.DenseIndex``, through chromadb's public collection API only; ``to_chroma`` is
the one translation of a ``seam.Filter`` into Chroma's ``where`` syntax. Reads ask Chroma for
no more than they return (``nearest``: distances alone; converting texts and metadata costs
more than the search). Writes are split into ``max_batch`` rows a call (the client's limit).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ragingest.vectorstore.seam import AllOf, Condition, Filter, StoredChunk


def to_chroma(where: Filter | None) -> dict[str, Any] | None:
    """The one translation of a ``seam.Filter`` into Chroma's ``where`` syntax."""
    if where is None:
        return None
    if isinstance(where, Condition):
        value = list(where.value) if isinstance(where.value, tuple) else where.value
        return {where.key: {where.op: value}}
    parts = [p for p in (to_chroma(part) for part in where.parts) if p is not None]
    if len(parts) == 1:  # Chroma refuses $and/$or of fewer than two
        return parts[0]
    return {"$and" if isinstance(where, AllOf) else "$or": parts}


class ChromaIndex:
    """One chromadb collection as a ``port.DenseIndex`` (module docstring)."""

    def __init__(self, collection: Any, max_batch: int) -> None:
        self.collection = collection  # chromadb's Collection
        self._max_batch = max_batch

    @property
    def name(self) -> str:
        return str(self.collection.name)

    @property
    def max_batch(self) -> int:
        return self._max_batch

    def metadata(self) -> dict[str, Any]:
        return dict(self.collection.metadata or {})

    def add(
        self,
        ids: Sequence[str],
        vectors: Sequence[Sequence[float]],
        texts: Sequence[str | None],
        metadatas: Sequence[Mapping[str, Any]],
    ) -> None:
        """Chroma's upsert keeps an id's old text when given none and merges metadata, so the
        ids already stored are deleted first: each id then holds exactly what was given."""
        step = self._max_batch
        for i in range(0, len(ids), step):
            part = list(ids[i : i + step])
            stored = self.held(part)
            if stored:
                self.collection.delete(ids=sorted(stored))
            self.collection.upsert(
                ids=part,
                embeddings=[list(v) for v in vectors[i : i + step]],
                metadatas=[dict(m) for m in metadatas[i : i + step]],
                documents=list(texts[i : i + step]),
            )

    def delete(self, ids: Sequence[str]) -> None:
        step = self._max_batch
        for i in range(0, len(ids), step):
            self.collection.delete(ids=list(ids[i : i + step]))

    def update_metadata(self, ids: Sequence[str], metadatas: Sequence[Mapping[str, Any]]) -> None:
        """Chroma's update merges metadata: a stored key left out is given as None, which
        Chroma deletes, so each id holds exactly what was given."""
        step = self._max_batch
        for i in range(0, len(ids), step):
            part = list(ids[i : i + step])
            old = {c.id: c.metadata for c in self.get(part)}
            found = [(k, m) for k, m in zip(part, metadatas[i : i + step], strict=True) if k in old]
            if not found:
                continue
            replaced = [{**dict.fromkeys(old[k]), **dict(m)} for k, m in found]
            self.collection.update(ids=[k for k, _ in found], metadatas=replaced)

    def count(self) -> int:
        return int(self.collection.count())

    def nearest(
        self, vector: Sequence[float], n: int, where: Filter | None = None
    ) -> list[tuple[str, float]]:
        found = self.collection.query(
            query_embeddings=[list(vector)], n_results=n, where=to_chroma(where),
            include=["distances"],
        )  # fmt: skip
        pairs = zip(found["ids"][0], found["distances"][0], strict=True)
        return [(str(i), float(d)) for i, d in pairs]

    def nearest_chunks(
        self, vector: Sequence[float], n: int, where: Filter | None = None
    ) -> list[tuple[StoredChunk, float]]:
        found = self.collection.query(
            query_embeddings=[list(vector)], n_results=n, where=to_chroma(where),
            include=["documents", "metadatas", "distances"],
        )  # fmt: skip
        rows = zip(
            found["ids"][0], found["documents"][0], found["metadatas"][0], found["distances"][0],
            strict=False,
        )  # fmt: skip
        return [
            (StoredChunk(str(i), text, dict(meta or {})), float(distance))
            for i, text, meta, distance in rows
            if text is not None
        ]

    def get(
        self,
        ids: Sequence[str] | None = None,
        where: Filter | None = None,
        *,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[StoredChunk]:
        if ids is not None and not ids:
            return []
        got = self.collection.get(
            ids=None if ids is None else list(ids), where=to_chroma(where),
            limit=limit, offset=offset or None, include=["documents", "metadatas"],
        )  # fmt: skip
        rows = zip(got["ids"], got["documents"], got["metadatas"], strict=True)
        return [StoredChunk(str(i), text, dict(meta or {})) for i, text, meta in rows]

    def held(self, ids: Sequence[str], where: Filter | None = None) -> set[str]:
        if not ids:
            return set()
        got = self.collection.get(ids=list(ids), where=to_chroma(where), include=[])
        return {str(i) for i in got["ids"]}

    def ids(self, where: Filter | None = None) -> list[str]:
        got = self.collection.get(where=to_chroma(where), include=[])
        return [str(i) for i in got["ids"]]

    def vectors(self, ids: Sequence[str], where: Filter | None = None) -> dict[str, list[float]]:
        if not ids:
            return {}
        got = self.collection.get(ids=list(ids), where=to_chroma(where), include=["embeddings"])
        return {str(i): list(v) for i, v in zip(got["ids"], got["embeddings"], strict=True)}
