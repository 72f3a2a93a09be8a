"""``MemoryIndex``: one collection's chunks and vectors in a dict, a ``port.DenseIndex``.

Contract: ``port.DenseIndex``, exact. The store's order is insertion order, and an ``add`` of
an id already held moves its row to the end, as a new row; ``nearest`` computes the cosine
distance to every admitted vector (a zero vector is at distance 1 from everything), nearest
first, ties in the store's order; filters mean what ``seam.matches`` says. Reads return copies:
changing a returned row changes nothing stored. Safe to call from several threads.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from ragingest.vectorstore.seam import Filter, StoredChunk, matches

MAX_BATCH = 100_000  # no client limit in memory; a bound keeps a caller's batching exercised


def _copy(metadata: Mapping[str, Any]) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, list) else v for k, v in metadata.items()}


class Table:
    """One collection's state, shared by every ``MemoryIndex`` opened on it (a rename changes
    ``name`` here, so an open index keeps working under the new name)."""

    def __init__(self, name: str, metadata: Mapping[str, Any]) -> None:
        self.name = name
        self.metadata = _copy(metadata)
        self.rows: dict[str, Row] = {}  # in the store's order
        self.added = 0  # rows ever added: the next row's place in the store's order
        self.lock = threading.RLock()


class Row(NamedTuple):
    chunk: StoredChunk
    vector: np.ndarray
    place: int  # where it stands in the store's order


class MemoryIndex:
    """One in-memory collection as a ``port.DenseIndex`` (module docstring)."""

    def __init__(self, table: Table) -> None:
        self._table = table

    @property
    def name(self) -> str:
        return self._table.name

    @property
    def max_batch(self) -> int:
        return MAX_BATCH

    def metadata(self) -> dict[str, Any]:
        with self._table.lock:
            return _copy(self._table.metadata)

    def add(
        self,
        ids: Sequence[str],
        vectors: Sequence[Sequence[float]],
        texts: Sequence[str | None],
        metadatas: Sequence[Mapping[str, Any]],
    ) -> None:
        if not len(ids) == len(vectors) == len(texts) == len(metadatas):
            raise ValueError(
                f"add takes one vector, text and metadata per id: {len(ids)} ids, "
                f"{len(vectors)} vectors, {len(texts)} texts, {len(metadatas)} metadatas"
            )
        table = self._table
        with table.lock:
            for chunk_id, vector, text, meta in zip(ids, vectors, texts, metadatas, strict=True):
                table.rows.pop(chunk_id, None)  # an upsert moves to the end, as a new row
                chunk = StoredChunk(chunk_id, text, _copy(meta))
                table.rows[chunk_id] = Row(chunk, np.asarray(vector, np.float64), table.added)
                table.added += 1

    def delete(self, ids: Sequence[str]) -> None:
        with self._table.lock:
            for chunk_id in ids:
                self._table.rows.pop(chunk_id, None)

    def update_metadata(self, ids: Sequence[str], metadatas: Sequence[Mapping[str, Any]]) -> None:
        rows = self._table.rows
        with self._table.lock:
            for chunk_id, meta in zip(ids, metadatas, strict=True):
                if chunk_id in rows:  # in place: the row keeps its place, text and vector
                    old = rows[chunk_id]
                    chunk = StoredChunk(chunk_id, old.chunk.text, _copy(meta))
                    rows[chunk_id] = old._replace(chunk=chunk)

    def count(self) -> int:
        return len(self._table.rows)

    def nearest(
        self, vector: Sequence[float], n: int, where: Filter | None = None
    ) -> list[tuple[str, float]]:
        return [(chunk.id, distance) for chunk, distance in self._ranked(vector, n, where)]

    def nearest_chunks(
        self, vector: Sequence[float], n: int, where: Filter | None = None
    ) -> list[tuple[StoredChunk, float]]:
        ranked = self._ranked(vector, n, where)
        return [(_out(chunk), distance) for chunk, distance in ranked if chunk.text is not None]

    def get(
        self,
        ids: Sequence[str] | None = None,
        where: Filter | None = None,
        *,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[StoredChunk]:
        admitted = self._admitted(ids, where)
        end = None if limit is None else offset + limit
        return [_out(row.chunk) for row in admitted[offset:end]]

    def held(self, ids: Sequence[str], where: Filter | None = None) -> set[str]:
        return {row.chunk.id for row in self._admitted(ids, where)}

    def ids(self, where: Filter | None = None) -> list[str]:
        return [row.chunk.id for row in self._admitted(None, where)]

    def vectors(self, ids: Sequence[str], where: Filter | None = None) -> dict[str, list[float]]:
        return {row.chunk.id: row.vector.tolist() for row in self._admitted(ids, where)}

    def _admitted(self, ids: Sequence[str] | None, where: Filter | None) -> list[Row]:
        """The rows among ``ids`` (None: all) that ``where`` admits, in the store's order."""
        rows = self._table.rows
        with self._table.lock:
            if ids is None:
                found = list(rows.values())
            else:
                found = sorted(
                    (rows[i] for i in dict.fromkeys(ids) if i in rows), key=lambda r: r.place
                )
        return [row for row in found if matches(where, row.chunk.metadata)]

    def _ranked(
        self, vector: Sequence[float], n: int, where: Filter | None
    ) -> list[tuple[StoredChunk, float]]:
        admitted = self._admitted(None, where)
        if not admitted or n <= 0:
            return []
        query = np.asarray(vector, dtype=np.float64)
        matrix = np.stack([row.vector for row in admitted])
        norms = np.linalg.norm(matrix, axis=1) * (float(np.linalg.norm(query)) or 1.0)
        distances = 1.0 - (matrix @ query) / np.where(norms == 0.0, 1.0, norms)
        order = np.argsort(distances, kind="stable")[:n]  # stable: ties keep the store's order
        return [(admitted[i].chunk, float(distances[i])) for i in order]


def _out(chunk: StoredChunk) -> StoredChunk:
    return StoredChunk(chunk.id, chunk.text, _copy(chunk.metadata))
