"""ragingest: documents → heading-first chunks → sentence-transformers → Chroma.

Two calls for a LangChain app, both plain functions that import the pipeline on first use (so
``import ragingest`` and ``ragingest --help`` stay fast)::

    import ragingest
    report = ragingest.ingest(["docs/", PyPDFLoader("report.pdf")],
                              persist_dir="chroma_db", collection="kb", chunk_size=200)
    chain_retriever = ragingest.retriever("chroma_db", "kb", k=4)

The layers, bottom to top, are described in docs/architecture.md: ``schema``/``chunk``/``errors``
→ ``models`` → ``loaders`` → ``splitters`` → ``vectorstore`` → ``retrieval`` → ``pipeline`` →
``evaluate`` → ``cli``. The pipeline package is not called ``ingest``: a subpackage of that name
would replace this function as the package's attribute the moment it is first imported.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragingest.version import __version__

if TYPE_CHECKING:
    from typing import Unpack

    from langchain_core.retrievers import BaseRetriever

    from ragingest.pipeline.api import IngestSettings
    from ragingest.pipeline.options import IngestOptions
    from ragingest.pipeline.report import RunReport
    from ragingest.retrieval.context import TokenCounter
    from ragingest.retrieval.retriever import RetrieverSettings


def ingest(
    sources: Any,
    *,
    persist_dir: str | Path,
    collection: str,
    options: IngestOptions | None = None,
    **settings: Unpack[IngestSettings],
) -> RunReport:
    """One run over ``sources`` into ``collection``; the ``RunReport``.

    ``sources``: paths (files or folders), LangChain ``BaseLoader``s and iterables of
    ``Document``s, in any mix; each is re-indexed by ``metadata["source"]`` (unchanged: not
    embedded again; gone: its chunks deleted). ``settings``: the fields of ``IngestOptions``
    and ``SplitSettings`` by name (``IngestSettings``), or a whole ``options``. An unknown
    name raises ``TypeError`` listing the known ones (``ragingest.pipeline.api``)."""
    from ragingest.pipeline.api import make_options, run

    return run(sources, make_options(persist_dir, collection, options, **settings))


def retriever(
    persist_dir: str | Path | None = None,
    collection: str | None = None,
    *,
    max_context_tokens: int | None = None,
    auto_merge: float | None = None,
    tokenizer: str | TokenCounter | None = None,
    join_neighbours: bool = True,
    **settings: Unpack[RetrieverSettings],
) -> BaseRetriever:
    """A LangChain retriever over an ingested collection: parent expansion, de-duplication,
    metadata filters and ``k`` (``settings``: ``RetrieverSettings``, the keywords of
    ``ragingest.retrieval.retriever.retriever``).

    Context for a generator (``ragingest.retrieval.context``): ``max_context_tokens`` keeps
    the best passages whole within that budget, counted by ``tokenizer`` (the generator's: a
    tokenizer.json, a tokenizer folder, ``"tiktoken:NAME"``, a callable; default the embedding
    model's), and returns chunks unless ``parents=True``; ``auto_merge=0.5`` searches chunks and
    returns a parent section only when at least half of its chunks are hits. Under a budget,
    hits that meet in one section become one passage (``join_neighbours=False``: kept apart).

    Servers, as ``ingest`` takes them: ``chroma_host``, ``chroma_port``, ``chroma_token``
    (default ``$RAGINGEST_CHROMA_TOKEN``), ``chroma_token_header``, ``chroma_ssl`` and
    ``records_url`` (default ``$RAGINGEST_RECORDS_URL``); with a Chroma server and a PostgreSQL
    records database ``persist_dir`` may be left out:
    ``ragingest.retriever(collection="kb", chroma_host="10.0.0.5", records_url="postgresql+psycopg://...")``."""
    from ragingest.retrieval.context import retriever as context_retriever

    if collection is None:
        raise TypeError("retriever() needs collection= (the collection name)")
    return context_retriever(
        persist_dir,
        collection,
        max_context_tokens=max_context_tokens,
        auto_merge=auto_merge,
        tokenizer=tokenizer,
        join_neighbours=join_neighbours,
        **settings,
    )


__all__ = ["__version__", "ingest", "retriever"]
