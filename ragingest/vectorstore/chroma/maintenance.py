"""Chroma's calls that keep a store bounded (``vectorstore.retention`` decides when and how
much): a collection's HNSW sync threshold, and every vector every collection of a client
stores."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

log = logging.getLogger(__name__)


def set_sync_threshold(collection: Any, threshold: int) -> None:
    """Make ``collection``'s HNSW index persist at least every ``threshold`` writes (Chroma's
    ``hnsw.sync_threshold``); a no-op when it already does, left as it is (a warning) when
    Chroma refuses the value."""
    hnsw = (collection.configuration or {}).get("hnsw") or {}
    if hnsw.get("sync_threshold", threshold) <= threshold:
        return
    try:
        collection.modify(configuration={"hnsw": {"sync_threshold": threshold}})
    except Exception as exc:  # Chroma's own validation: the log then stays at its default
        log.warning("collection %s: log bound not set: %s", collection.name, exc)


def stored_vectors(client: Any, page: int) -> Iterator[Any]:
    """Every vector every collection of ``client`` stores, read ``page`` at a time."""
    for listed in client.list_collections():
        collection = client.get_collection(getattr(listed, "name", listed))
        for offset in range(0, collection.count(), page):
            got = collection.get(include=["embeddings"], limit=page, offset=offset)
            yield from got["embeddings"]
