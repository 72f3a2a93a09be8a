"""The names callers imported from here before the store port (``open_store``,
``chroma_client``, ``collection_metadata``, the metadata keys...), kept importable: a
collection is opened by ``vectorstore.opening`` over ``chroma.backend``, and tests that
check what Chroma itself holds reach its client here.

``langchain_chroma.Chroma`` is not used: the port (``chroma.index.ChromaIndex``) covers every
call ragingest makes, and ``collection.Collection`` is LangChain's ``VectorStore`` itself.
"""

from __future__ import annotations

from ragingest.vectorstore.chroma.collection_info import (
    ALIAS_KEY,
    FINGERPRINT_KEY,
    MODEL_KEY,
    SETTINGS_KEY,
    check_compatible,
    chroma_client,
    collection_metadata,
    embeddings_identity,
    mismatch,
    model_identity,
    require_store_dir,
    store_metadata,
)
from ragingest.vectorstore.opening import open_store

__all__ = [  # importable from here as before the store port
    "ALIAS_KEY",
    "FINGERPRINT_KEY",
    "MODEL_KEY",
    "SETTINGS_KEY",
    "check_compatible",
    "chroma_client",
    "collection_metadata",
    "embeddings_identity",
    "mismatch",
    "model_identity",
    "open_store",
    "require_store_dir",
    "store_metadata",
]
