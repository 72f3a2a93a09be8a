"""The embedding cache: LangChain ``CacheBackedEmbeddings`` over the key-value store
(``vectorstore.kv``, namespace ``embeddings``), keyed by model fingerprint + sha256 of the
embedded text (``cache_key``, the one definition; Ray's split reads its first 8 bytes), so
identical text is never embedded twice (across files, runs, collections and
rebuilds). The store is the records database when it is PostgreSQL (shared by every writer),
else ``ragingest_embeddings.sqlite`` beside Chroma, whose earlier table (``byte_store``) is
moved into it the first time it is opened.

Vectors are stored as little-endian float32 (what the model returns and what Chroma keeps, so
nothing is lost). The model behind the cache is loaded on the first miss only: a re-run with
nothing new to embed never loads it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from langchain_classic.embeddings import CacheBackedEmbeddings
from langchain_classic.storage import EncoderBackedStore
from langchain_core.embeddings import Embeddings
from langchain_core.stores import BaseStore

from ragingest.vectorstore.records.kv import KVStore

CACHE_FILE = "ragingest_embeddings.sqlite"
NAMESPACE = "embeddings"
LEGACY = ("byte_store", f"SELECT '{NAMESPACE}', key, value FROM byte_store")  # earlier versions


class LazyEmbeddings(Embeddings):
    """Builds the real embeddings on first use; counts the texts they embedded."""

    def __init__(self, factory: Callable[[], Embeddings]) -> None:
        self._factory = factory
        self._embeddings: Embeddings | None = None

    @property
    def loaded(self) -> bool:
        """Whether the model has been loaded."""
        return self._embeddings is not None

    @property
    def embeddings(self) -> Embeddings:
        """The wrapped embeddings, loaded on first access."""
        if self._embeddings is None:
            self._embeddings = self._factory()
        return self._embeddings

    @property
    def computed(self) -> int:
        """How many texts the model has embedded (0 before it is loaded)."""
        return getattr(self._embeddings, "computed", 0) if self._embeddings else 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, from the model (loaded on first call)."""
        return self.embeddings.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        """The query's vector, from the model (loaded on first call)."""
        return self.embeddings.embed_query(text)


HASH_BYTES = 8  # of a text's digest, in the uint64 hashes the Ray split compares


def text_digest(text: str) -> bytes:
    """The sha256 of ``text`` (UTF-8) that names it in the cache (``cache_key``)."""
    return hashlib.sha256(text.encode()).digest()


def text_hashes(texts: Sequence[str]) -> np.ndarray:
    """Each text's hash as ``cached_text_hashes`` lists it: the first ``HASH_BYTES`` of its
    ``text_digest``, big-endian, as uint64."""
    return np.array(
        [int.from_bytes(text_digest(t)[:HASH_BYTES], "big") for t in texts], dtype=np.uint64
    )


def cache_key(fingerprint: str, text: str) -> str:
    """The cache key of ``text`` embedded by the model ``fingerprint``."""
    return f"{fingerprint}:{text_digest(text).hex()}"


def _pack(vector: list[float]) -> bytes:
    return np.asarray(vector, dtype="<f4").tobytes()


def _unpack(data: bytes) -> list[float]:
    return np.frombuffer(data, dtype="<f4").tolist()


class CachedEmbeddings(CacheBackedEmbeddings):
    """``CacheBackedEmbeddings`` that also folds duplicates within one call and counts hits.

    ``model_name`` and ``fingerprint`` identify the model without loading it (the vector
    store's compatibility check reads them)."""

    def __init__(
        self,
        model_name: str,
        fingerprint: str,
        factory: Callable[[], Embeddings],
        store: BaseStore[str, bytes],
        batch_size: int | None = None,
    ) -> None:
        self.model_name = model_name
        self.fingerprint = fingerprint
        self.kv = store if isinstance(store, KVStore) else None  # pruned by ``retention``
        self.lazy = LazyEmbeddings(factory)
        super().__init__(
            self.lazy,
            EncoderBackedStore(
                store,
                key_encoder=lambda text: cache_key(fingerprint, text),
                value_serializer=_pack,
                value_deserializer=_unpack,
            ),
            batch_size=batch_size,
        )
        self.requested = 0  # texts asked for, duplicates included
        self.cached = 0  # distinct texts answered from the cache
        self.elsewhere = 0  # texts embedded by an engine elsewhere (``store_vectors``)

    @property
    def computed(self) -> int:
        """Texts the model embedded (cache misses), here or elsewhere."""
        return self.lazy.computed + self.elsewhere

    def store_vectors(self, pairs: Sequence[tuple[str, list[float]]]) -> int:
        """Put vectors an engine computed elsewhere (Ray actors) into the cache, counted as
        computed; texts already cached are left as they are. Returns how many went in."""
        unique = dict(pairs)
        texts = list(unique)
        known = self.document_embedding_store.mget(texts)
        new = [(t, unique[t]) for t, v in zip(texts, known, strict=True) if v is None]
        self.document_embedding_store.mset(new)
        self.elsewhere += len(new)
        return len(new)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, each distinct text embedded at most once (cached vectors reused);
        counts ``requested`` and ``cached``."""
        unique = list(dict.fromkeys(texts))
        before = self.computed
        vectors = dict(zip(unique, super().embed_documents(unique), strict=True))
        self.requested += len(texts)
        self.cached += len(unique) - (self.computed - before)
        return [vectors[text] for text in texts]


def cached_embeddings(
    persist_dir: str | Path,
    model_name: str,
    fingerprint: str,
    factory: Callable[[], Embeddings],
    batch_size: int | None = None,
    records_url: str | None = None,
) -> CachedEmbeddings:
    """Cached embeddings of one model, in the records database when it is PostgreSQL, else in
    ``ragingest_embeddings.sqlite`` in ``persist_dir`` (a damaged one set aside and built
    again: ``kv.kv_store``'s ``disposable``); ``factory`` builds the model's embeddings on the
    first miss."""
    from ragingest.vectorstore.records.kv import kv_store

    store = kv_store(persist_dir, records_url, CACHE_FILE, NAMESPACE, LEGACY, disposable=True)
    return CachedEmbeddings(model_name, fingerprint, factory, store, batch_size)


def cached_text_hashes(embeddings: CachedEmbeddings) -> np.ndarray:
    """Sorted uint64 hashes of the texts in the embedding cache for this model (8 bytes per
    text, read straight from the key column of the cache's table): the split skips
    them. Empty when the cache is another store (then every text is embedded on Ray; still
    correct)."""
    from sqlalchemy import func, select

    from ragingest.vectorstore.records.kv import KV_TABLE

    store = getattr(getattr(embeddings, "document_embedding_store", None), "store", None)
    engine, namespace = getattr(store, "engine", None), getattr(store, "namespace", None)
    if engine is None or namespace is None:
        return np.zeros(0, dtype=np.uint64)
    prefix = f"{embeddings.fingerprint}:"
    end = prefix[:-1] + chr(ord(prefix[-1]) + 1)
    key = KV_TABLE.c.key
    statement = (
        select(func.substr(key, len(prefix) + 1, 2 * HASH_BYTES))
        .where(KV_TABLE.c.namespace == namespace)
        .where(key >= prefix)
        .where(key < end)
    )

    def read() -> np.ndarray:
        with getattr(store, "engine", engine).connect() as connection:  # a new one when set aside
            rows = connection.execute(statement)
            return np.fromiter((int(h, 16) for (h,) in rows), dtype=np.uint64)

    hashes = store.recovering(read) if isinstance(store, KVStore) else read()
    hashes.sort()
    return hashes
