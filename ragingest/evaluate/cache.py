"""Embeddings for ``ragingest evaluate``, cached by (model, role, text) hash, so configurations
that share chunks embed them once (and, with a SQLite ``path``, once across runs)."""

from __future__ import annotations

import hashlib
import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ragingest.defaults import EMBED_BATCH_SIZE
from ragingest.models.resolve import load_model_info

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from ragingest.models.embeddings import SentenceTransformerEmbeddings


class EmbeddingCache:
    """Embeddings by (model, role, text) hash: in memory, and in SQLite at ``path`` if given."""

    def __init__(self, model: str | None, path: str | Path | None = None) -> None:
        self.model = model
        self.info = load_model_info(model)
        self._memory: dict[str, np.ndarray] = {}
        self._db: sqlite3.Connection | None = None
        self._embeddings: Any = None
        self.computed = 0
        self.seconds = 0.0
        if path:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(path))
            self._db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, v BLOB)")

    def _key(self, role: str, text: str) -> str:
        raw = "\x1f".join((self.info.fingerprint, role, text)).encode("utf-8")
        return hashlib.sha256(raw).hexdigest()

    def _load(self, keys: list[str]) -> None:
        if self._db is None:
            return
        missing = [k for k in keys if k not in self._memory]
        for i in range(0, len(missing), 500):
            batch = missing[i : i + 500]
            marks = ",".join("?" * len(batch))
            rows = self._db.execute(f"SELECT key, v FROM vectors WHERE key IN ({marks})", batch)
            for key, blob in rows:
                self._memory[key] = np.frombuffer(blob, dtype=np.float32)

    def embed(self, texts: Sequence[str], role: str = "document") -> np.ndarray:
        """One row per text, L2-normalized, with the model's document prompt; ``role`` only
        keeps apart texts embedded for different uses (chunks, semantic sentence windows)."""
        keys = [self._key(role, t) for t in texts]
        self._fill(keys, texts, lambda batch: self._model().embed_documents(batch))
        if not keys:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self._memory[k] for k in keys])

    def queries(self, texts: Sequence[str]) -> np.ndarray:
        """Query embeddings: one model call per batch, with the query prompt."""
        keys = [self._key("query", t) for t in texts]

        def encode(batch: list[str]) -> np.ndarray:
            return self._model().model.encode(
                batch,
                prompt=self.info.query_prompt or None,
                batch_size=EMBED_BATCH_SIZE,
                normalize_embeddings=True,
                convert_to_numpy=True,
            )

        self._fill(keys, texts, encode)
        return np.stack([self._memory[k] for k in keys])

    def _model(self) -> SentenceTransformerEmbeddings:
        if self._embeddings is None:
            from ragingest.models.embeddings import SentenceTransformerEmbeddings

            self._embeddings = SentenceTransformerEmbeddings(
                self.model, batch_size=EMBED_BATCH_SIZE
            )
        return self._embeddings

    def _fill(
        self, keys: list[str], texts: Sequence[str], encode: Callable[[list[str]], ArrayLike]
    ) -> None:
        """Vectors of the ``keys`` not cached yet, from ``encode`` (timed, counted, stored)."""
        self._load(keys)
        todo: dict[str, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key not in self._memory:
                todo.setdefault(key, text)
        if not todo:
            return
        started = time.perf_counter()
        vectors = np.asarray(encode(list(todo.values())), dtype=np.float32)
        self.seconds += time.perf_counter() - started
        self.computed += len(todo)
        for key, vector in zip(todo, vectors, strict=True):
            self._memory[key] = vector
        if self._db is not None:
            self._db.executemany(
                "INSERT OR REPLACE INTO vectors VALUES (?, ?)",
                [(k, self._memory[k].tobytes()) for k in todo],
            )
            self._db.commit()
