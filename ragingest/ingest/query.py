"""Search a collection: the CLI's ``query`` and the Python entry point for apps."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragingest.vectorstore.filters import parse_where
from ragingest.vectorstore.search import rank_chunks
from ragingest.vectorstore.store import open_store

__all__ = ["parse_where", "search"]


def search(
    text: str,
    persist_dir: str | Path,
    collection: str,
    k: int = 4,
    where: list[str] | None = None,
    model: str | None = None,
    records_url: str | None = None,
    hybrid: bool = False,
) -> list[dict[str, Any]]:
    """Top ``k`` chunks as ``{"id", "text", "score", "metadata"}``, best first (score = cosine;
    with ``hybrid``, the reciprocal-rank-fusion score of the dense and BM25 rankings, and
    ``dense_rank``/``lexical_rank``). ``records_url``: the records database that resolves the
    name (see ``open_store``)."""
    store = open_store(persist_dir, collection, model=model, create=False, records_url=records_url)
    if hybrid and not store.lexical_in_step():
        store.sync_lexical()
    depth = max(k, 20) if hybrid else k  # fusion needs each list deeper than the top k
    ranking = rank_chunks(store, text, depth, where=where or None, hybrid=hybrid)
    out = []
    for hit in ranking.hits[:k]:
        row = {
            "id": hit.document.id,
            "text": hit.document.page_content,
            "score": round(float(hit.score), 4),
            "metadata": hit.document.metadata,
        }
        if hybrid:
            row |= {"dense_rank": hit.dense_rank, "lexical_rank": hit.lexical_rank}
        out.append(row)
    return out
