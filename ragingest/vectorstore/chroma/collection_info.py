"""How a Chroma collection is reached, without importing ``langchain_chroma`` (the read-only
``query`` path, ``status`` and the run's checks use these): the client of a directory or a
server, and the refusal of a directory that holds no store. What a collection records
(``vectorstore.identity``) is importable from here too.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from ragingest.errors import CollectionMismatchError
from ragingest.vectorstore.chroma.server import active_server
from ragingest.vectorstore.identity import (  # noqa: F401  (importable from here too)
    ACCESS_POLICY_KEY,
    ALIAS_KEY,
    FINGERPRINT_KEY,
    MODEL_KEY,
    POLICY_SETTING,
    SETTINGS_KEY,
    check_compatible,
    embeddings_identity,
    mismatch,
    missing_collection,
    model_identity,
    store_metadata,
)


def chroma_client(persist_dir: str | Path | None) -> Any:
    """The embedded client of ``persist_dir``, or an ``HttpClient`` inside ``use_server``
    (``ragingest.vectorstore.chroma.server``)."""
    from ragingest.vectorstore.chroma.clients import persistent_client

    server = active_server()
    if server is not None:
        return server.client()

    from ragingest.vectorstore.records.location import creation_lock

    if persist_dir is None:
        raise ValueError("no --persist-dir and no Chroma server: give one of them")

    # two first runs at once must not both create Chroma's tables
    with creation_lock(Path(persist_dir) / "chroma.sqlite3"):
        return persistent_client(persist_dir)


def is_remote(client: Any) -> bool:
    """Whether ``client`` talks to a Chroma server over HTTP (each call a round trip) rather
    than to the embedded store in this process."""
    settings = client.get_settings()
    return str(getattr(settings, "chroma_api_impl", "")).endswith(".FastAPI")


def require_store_dir(persist_dir: str | Path) -> None:
    """Refuse, creating nothing, a ``persist_dir`` that holds no Chroma store (with a Chroma
    server only the directory's other files are read, so it need not exist)."""
    if active_server() is not None:
        return
    path = Path(persist_dir)
    if not path.is_dir():
        raise CollectionMismatchError(
            f"no such directory: {path}; give the --persist-dir of an ingested collection "
            "(`ragingest ingest PATH --persist-dir DIR --collection NAME` creates one)"
        )
    if not (path / "chroma.sqlite3").is_file():
        raise CollectionMismatchError(
            f"{path} holds no Chroma collection (no chroma.sqlite3); give the --persist-dir "
            "that `ragingest ingest` wrote"
        )


def collection_metadata(client: Any, collection: str) -> dict[str, Any] | None:
    """The collection's metadata, or ``None`` when it does not exist."""
    try:
        return dict(client.get_collection(collection).metadata or {})
    except Exception:
        return None
