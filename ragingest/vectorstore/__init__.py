"""Vector store: models (offline), embeddings, and the Chroma collection."""

from __future__ import annotations

from typing import Any

__all__ = ["SentenceTransformerEmbeddings", "open_store"]


def __getattr__(name: str) -> Any:
    """Imported on first use: ``ragingest --help`` and the modules that need only ``models``
    or ``server`` do not pay for Chroma and LangChain."""
    if name == "SentenceTransformerEmbeddings":
        from ragingest.vectorstore.embeddings import SentenceTransformerEmbeddings

        return SentenceTransformerEmbeddings
    if name == "open_store":
        from ragingest.vectorstore.store import open_store

        return open_store
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
