"""Where a Chroma collection is opened from: ``chroma_place``, the Chroma half of
``opening.open_place`` (the default backend's), and the names callers imported from here
before the store port (``open_store``, ``chroma_client``, ``collection_metadata``...), kept
importable.

Contract of ``chroma_place(persist_dir, server, client, must_exist=, copy=)``: the
``ChromaBackend`` of ``client`` when given, else of ``server`` (default: the one of an
enclosing ``server.use_server``), else of the embedded directory ``persist_dir``. With
``must_exist`` a directory that holds no Chroma store is refused before chromadb's client
could create it (``collection_info.require_store_dir``); with ``copy`` a directory that can't
be written is read from a temporary copy (``readable.readable_copy``: chromadb's embedded
client writes as it opens), returned as the folder to read and the object to keep alive.
``langchain_chroma.Chroma`` is not used: the port (``chroma.index.ChromaIndex``) covers every
call ragingest makes, and ``collection.Collection`` is LangChain's ``VectorStore`` itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragingest.vectorstore.chroma.backend import ChromaBackend
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
from ragingest.vectorstore.chroma.server import active_server
from ragingest.vectorstore.opening import open_store

__all__ = [  # importable from here as before the store port
    "ALIAS_KEY",
    "FINGERPRINT_KEY",
    "MODEL_KEY",
    "SETTINGS_KEY",
    "check_compatible",
    "chroma_client",
    "chroma_place",
    "collection_metadata",
    "embeddings_identity",
    "mismatch",
    "model_identity",
    "open_store",
    "require_store_dir",
    "store_metadata",
]


def chroma_place(
    persist_dir: str | Path | None,
    server: Any,
    client: Any,
    *,
    must_exist: bool,
    copy: bool = False,
) -> tuple[ChromaBackend, str | Path | None, object]:
    """``(backend, folder of the side stores, what to keep alive)`` (module docstring)."""
    if client is not None:
        return ChromaBackend(client), persist_dir, None
    server = server or active_server()
    keep: object = None
    if server is None:
        if persist_dir is None:
            raise ValueError("give persist_dir (--persist-dir: the Chroma directory) or a server")
        if copy:
            from ragingest.vectorstore.chroma.readable import readable_copy, store_path

            keep = readable_copy(persist_dir)
            persist_dir = persist_dir if keep is None else store_path(keep)
        if must_exist:
            require_store_dir(persist_dir)
    made = server.client() if server is not None else chroma_client(persist_dir)
    return ChromaBackend(made), persist_dir, keep
