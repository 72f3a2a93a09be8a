"""ragingest: documents → heading-first chunks → sentence-transformers → Chroma."""

from __future__ import annotations

from typing import Any

from ragingest import ingest  # callable: ragingest.ingest(sources, persist_dir=..., ...)
from ragingest.version import __version__


def retriever(
    persist_dir: Any = None,
    collection: str | None = None,
    *,
    max_context_tokens: int | None = None,
    auto_merge: float | None = None,
    tokenizer: Any = None,
    **kwargs: Any,
) -> Any:
    """A LangChain retriever over an ingested collection: parent expansion, de-duplication,
    metadata filters and ``k`` (see ``ragingest.vectorstore.retriever.retriever``).

    Context for a generator (``ragingest.vectorstore.context``): ``max_context_tokens`` keeps
    the best passages whole within that budget, counted by ``tokenizer`` (the generator's: a
    tokenizer.json, a tokenizer folder, ``"tiktoken:NAME"``, a callable; default the embedding
    model's), and returns chunks unless ``parents=True``; ``auto_merge=0.5`` searches chunks and
    returns a parent section only when at least half of its chunks are hits.

    Servers, as ``ingest`` takes them: ``chroma_host``, ``chroma_port``, ``chroma_token``
    (default ``$RAGINGEST_CHROMA_TOKEN``), ``chroma_token_header``, ``chroma_ssl`` and
    ``records_url`` (default ``$RAGINGEST_RECORDS_URL``); with a Chroma server and a PostgreSQL
    records database ``persist_dir`` may be left out:
    ``ragingest.retriever(collection="kb", chroma_host="10.0.0.5", records_url="postgresql+psycopg://...")``."""
    from ragingest.vectorstore.context import retriever as _retriever

    if collection is None:
        raise TypeError("retriever() needs collection= (the collection name)")

    return _retriever(
        persist_dir,
        collection,
        max_context_tokens=max_context_tokens,
        auto_merge=auto_merge,
        tokenizer=tokenizer,
        **kwargs,
    )


__all__ = ["__version__", "ingest", "retriever"]
