"""chromadb's clients, telemetry off: the embedded one of a directory and the HTTP one of a
server. chromadb is imported inside each function: ``ragingest --help`` and the modules that
only name a server never load it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chromadb.api import ClientAPI


def persistent_client(path: str | Path) -> ClientAPI:
    """chromadb's ``PersistentClient`` of the directory ``path``."""
    import chromadb
    from chromadb.config import Settings

    return chromadb.PersistentClient(path=str(path), settings=Settings(anonymized_telemetry=False))


def http_client(host: str, port: int, ssl: bool, headers: dict[str, str] | None) -> ClientAPI:
    """chromadb's ``HttpClient`` of a server; chromadb raises ``ValueError`` when it can't
    connect."""
    import chromadb
    from chromadb.config import Settings

    return chromadb.HttpClient(
        host=host, port=port, ssl=ssl, headers=headers,
        settings=Settings(anonymized_telemetry=False),
    )  # fmt: skip


def forget_clients() -> None:
    """Drop this process's cached clients (chromadb keeps one per path, also a failed one)."""
    from chromadb.api.client import Client

    Client.clear_system_cache()
