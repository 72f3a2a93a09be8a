"""ragingest: documents → heading-first chunks → sentence-transformers → Chroma."""

from __future__ import annotations

from typing import Any

from ragingest import ingest  # callable: ragingest.ingest(sources, persist_dir=..., ...)

__version__ = "0.1.0"


def retriever(persist_dir: Any, collection: str, **kwargs: Any) -> Any:
    """A LangChain retriever over an ingested collection: parent expansion, de-duplication,
    metadata filters and ``k`` (see ``ragingest.vectorstore.retriever.retriever``)."""
    from ragingest.vectorstore.retriever import retriever as _retriever

    return _retriever(persist_dir, collection, **kwargs)


__all__ = ["__version__", "ingest", "retriever"]
