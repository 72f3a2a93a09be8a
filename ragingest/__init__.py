"""ragingest: documents → heading-first chunks → sentence-transformers → Chroma."""

from __future__ import annotations

from typing import Any

from ragingest import ingest  # callable: ragingest.ingest(sources, persist_dir=..., ...)

__version__ = "0.1.0"


def retriever(
    persist_dir: Any,
    collection: str,
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
    returns a parent section only when at least half of its chunks are hits."""
    from ragingest.vectorstore.retriever import retriever as _retriever

    if max_context_tokens is None and auto_merge is None:
        return _retriever(persist_dir, collection, **kwargs)
    from ragingest.vectorstore.context import ContextRetriever, token_counter

    k = kwargs.pop("k", 4)
    # at an equal budget whole parents crowd out other hits (bench/README.md, "Context"):
    # under a budget the chunks themselves are the default
    kwargs["parents"] = kwargs.get("parents", False) and auto_merge is None
    base = _retriever(persist_dir, collection, k=max(4 * k, 20), **kwargs)
    return ContextRetriever(
        base=base,
        store=base.store,
        parent_store=base.store.parent_store if auto_merge is not None else None,
        merge_threshold=auto_merge,
        max_context_tokens=max_context_tokens,
        k=k,
        count=token_counter(tokenizer),
    )


__all__ = ["__version__", "ingest", "retriever"]
