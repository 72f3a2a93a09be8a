"""ragingest: documents → heading-first chunks → sentence-transformers → Chroma.

Two calls for a LangChain app, both plain functions, imported with what they need on first
use (so ``import ragingest`` and ``ragingest --help`` stay fast; ``ingest`` is
``ragingest.pipeline.api.ingest``)::

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

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragingest.defaults import (
    CHROMA_PORT,
    DENSE_WEIGHT,
    FUSION,
    HYBRID,
    JOIN_NEIGHBOURS,
    LAMBDA_MULT,
    SEARCH_TYPE,
    SECOND_STAGE,
    TOKEN_HEADER,
    TOP_K,
    Fusion,
    SearchType,
)
from ragingest.version import __version__

if TYPE_CHECKING:
    from langchain_core.documents import BaseDocumentCompressor

    from ragingest.pipeline.api import ingest
    from ragingest.retrieval.heading_first import HeadingFirstRetriever
    from ragingest.vectorstore.access.principals import ALL, AllPrincipals, Principals
    from ragingest.vectorstore.seam import ChunkSource


def retriever(
    persist_dir: str | Path | None = None,
    collection: str | None = None,
    *,
    k: int = TOP_K,
    parents: bool | None = None,
    dedup: bool | None = None,
    where: dict[str, Any] | list[str] | None = None,
    search_type: SearchType = SEARCH_TYPE,
    fetch_k: int | None = None,
    lambda_mult: float = LAMBDA_MULT,
    hybrid: bool = HYBRID,
    fusion: Fusion = FUSION,
    dense_weight: float = DENSE_WEIGHT,
    max_context_tokens: int | None = None,
    auto_merge: float | None = None,
    tokenizer: str | Callable[[str], int] | None = None,
    join_neighbours: bool = JOIN_NEIGHBOURS,
    second_stage: str | BaseDocumentCompressor | None = SECOND_STAGE,
    model: str | None = None,
    records_url: str | None = None,
    chroma_host: str | None = None,
    chroma_port: int = CHROMA_PORT,
    chroma_token: str | None = None,
    chroma_token_header: str = TOKEN_HEADER,
    chroma_ssl: bool = False,
    search_kwargs: dict[str, Any] | None = None,
    principals: Principals | AllPrincipals | Sequence[str] | None = None,
    source: ChunkSource | None = None,
) -> HeadingFirstRetriever:
    """A LangChain retriever over an ingested collection: a
    ``ragingest.retrieval.HeadingFirstRetriever`` (its fields say what each argument means),
    built from these arguments. They restate its fields' names, by design: ``import
    ragingest`` stays light (the fields need pydantic and LangChain), and the store is given
    as the CLI's ``chroma_*`` options; each default is ``ragingest.defaults``' (as the
    fields'), and tests/pipeline/test_ingest_api.py holds names and defaults equal.

    The chunks are searched (``hybrid``: BM25 fused with the dense ranking by ``fusion``;
    ``search_type="mmr"``), filtered by ``where`` (``{"source": "a.md"}``, Chroma's syntax or
    ``["price<=5000"]``), expanded to their heading sections (``parents``) and de-duplicated
    (``dedup``): exactly ``k`` passages whenever the collection has them. Context for a
    generator: ``max_context_tokens`` keeps the best passages whole within that budget,
    counted by ``tokenizer`` (the generator's: a tokenizer.json, a folder,
    ``"tiktoken:NAME"``, a callable; default the embedding model's); ``auto_merge=0.5``
    returns a parent section when half of its chunks hit; ``second_stage`` reads the
    candidates again before the budget (``"sentences"``, ``"neighbours"`` or a LangChain
    ``BaseDocumentCompressor``: ``retrieval.focus``). LangChain's
    ``search_kwargs={"k": 2}`` works too.

    A Chroma server instead of ``persist_dir``'s embedded store: ``chroma_host``,
    ``chroma_port``, ``chroma_token`` (default ``$RAGINGEST_CHROMA_TOKEN``),
    ``chroma_token_header``, ``chroma_ssl``; ``records_url`` (default
    ``$RAGINGEST_RECORDS_URL``) the records database. With a server and a PostgreSQL records
    database ``persist_dir`` may be left out:
    ``ragingest.retriever(collection="kb", chroma_host="10.0.0.5", records_url="postgresql+psycopg://...")``.

    ``principals``: who is reading (``Principals.of(user="bob", groups=["hr"])`` or
    ``["user:bob", "group:hr"]``; ``ALL``: everything), required on a collection with an
    access policy: no passage, parent or neighbour of a document they may not read comes back.
    ``source``: a collection already opened (``vectorstore.open_store(...)`` without
    principals, over any backend) read instead of ``persist_dir``'s; ``collection`` defaults
    to its name."""
    from ragingest.retrieval.heading_first import HeadingFirstRetriever
    from ragingest.vectorstore.access.principals import as_access
    from ragingest.vectorstore.chroma.server import chroma_server

    if collection is None and source is not None:
        collection = str(getattr(source, "name", ""))
    if collection is None:
        raise TypeError("retriever() needs collection= (the collection name)")
    server = chroma_server(chroma_host, chroma_port, chroma_token, chroma_token_header, chroma_ssl)
    return HeadingFirstRetriever(
        persist_dir=persist_dir, collection=collection, k=k, parents=parents, dedup=dedup,
        where=where, search_type=search_type, fetch_k=fetch_k, lambda_mult=lambda_mult,
        hybrid=hybrid, fusion=fusion, dense_weight=dense_weight,
        max_context_tokens=max_context_tokens, auto_merge=auto_merge, tokenizer=tokenizer,
        join_neighbours=join_neighbours, second_stage=second_stage, model=model,
        records_url=records_url, server=server, search_kwargs=search_kwargs,
        principals=as_access(principals), source=source,
    )  # fmt: skip


__all__ = ["ALL", "Principals", "__version__", "ingest", "retriever"]


def __getattr__(name: str) -> object:
    """``ingest`` (``pipeline.api``: its signature is built from the options' dataclasses),
    ``ALL`` and ``Principals`` (who is reading), imported on first use."""
    if name == "ingest":
        from ragingest.pipeline.api import ingest

        return ingest
    if name in ("ALL", "Principals"):
        from ragingest.vectorstore.access import principals as access

        return getattr(access, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The module's names with its lazy exports (``__all__``), not imported by listing them."""
    return sorted(set(globals()) | set(__all__))
