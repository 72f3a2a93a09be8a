"""Search a collection from an app: ``search(text, persist_dir, collection, k)``, the hits as
plain dicts (the CLI's ``query`` command prints them)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragingest.defaults import FUSION, HYBRID, TOP_K, Fusion
from ragingest.retrieval.filters import parse_where
from ragingest.retrieval.opening import open_guarded
from ragingest.retrieval.search import candidate_depth, rank_chunks
from ragingest.vectorstore.access.guarded import GuardedSource, say_unmatched
from ragingest.vectorstore.access.principals import Access, as_access
from ragingest.vectorstore.opening import open_reader
from ragingest.vectorstore.seam import ChunkSource

__all__ = ["RANKS", "parse_where", "search"]

RANKS = ("dense_rank", "lexical_rank")  # a hybrid hit's place in each ranking (None: absent)


def search(
    text: str,
    persist_dir: str | Path | None,
    collection: str,
    k: int = TOP_K,
    where: list[str] | None = None,
    model: str | None = None,
    records_url: str | None = None,
    hybrid: bool = HYBRID,
    *,
    fusion: Fusion = FUSION,
    server: Any = None,
    principals: Access | Sequence[str] = None,
    backend: Any = None,
) -> list[dict[str, Any]]:
    """Top ``k`` chunks as ``{"id", "text", "score", "metadata"}``, best first. ``hybrid``
    (default: it measured better on both eval sets, see bench/README.md): score = the fused
    score of the dense and BM25 rankings (``fusion``, as ``rank_chunks`` takes it), with
    ``dense_rank`` and ``lexical_rank``; else score = cosine. ``records_url``: the records
    database that resolves the name (see ``open_store``); ``server``: a store server
    (``ChromaServer(host, port, token, ...)``, as ``ingest --chroma-host`` names it; default: the
    server of an enclosing ``use_server``, else the embedded ``persist_dir``; ``persist_dir``
    may be None with a server and a PostgreSQL records database); ``backend``: the store
    (``open_store``'s: a ``port.Backend`` or a registered name; default Chroma).
    ``principals``: who is reading (``Principals``, a list of principal strings, or ``ALL``),
    required on a collection with an access policy (else ``PrincipalsRequiredError``); every
    read is limited to it
    (``vectorstore.guarded``)."""
    from ragingest.vectorstore.gate import reading

    reader = open_reader(
        persist_dir, collection, model=model, records_url=records_url, server=server,
        backend=backend,
    )  # fmt: skip
    who = as_access(principals)
    guard = GuardedSource(reader, who)  # refuses a policy read with no principals
    store: ChunkSource = guard
    with reading(store):
        in_step = not hybrid or reader.lexical_in_step()
        say_unmatched(guard, collection)
    if not in_step:  # a write cut short: the full store repairs it
        store = open_guarded(
            persist_dir, collection, who, hybrid=True, model=model, records_url=records_url,
            server=server, backend=backend,
        )  # fmt: skip
    depth = candidate_depth(k)  # the retriever's depth, so both rank the same candidates
    vector = store.embed_query(text)  # outside the gate: a writer waits less
    with reading(store):
        ranking = rank_chunks(
            store,
            text,
            depth,
            where=where or None,
            hybrid=hybrid,
            fusion=fusion,
            query_vector=vector,
        )
    out = []
    for hit in ranking.hits[:k]:
        row = {
            "id": hit.chunk.id,
            "text": hit.chunk.page_content,
            "score": round(float(hit.score), 4),
            "metadata": hit.chunk.metadata,
        }
        if hybrid:
            row |= {"dense_rank": hit.dense_rank, "lexical_rank": hit.lexical_rank}
            row["cosine"] = None if hit.dense_score is None else round(hit.dense_score, 4)
        out.append(row)
    return out
