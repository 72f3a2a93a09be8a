"""Chroma's calls that keep a store bounded (``retention`` decides when and how
much): a collection's HNSW sync threshold, its log purged now, and every vector every
collection of a client stores."""

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


# ids of the no-op deletes that make Chroma persist an index (``purge_log``); a chunk id of
# ragingest never has this form, and ``purge_log`` leaves alone any that a collection holds
FLUSH_ID = "ragingest-log-flush-{}"


def purge_log(collection: Any) -> None:
    """Make Chroma persist ``collection``'s HNSW index now, so that it purges its log
    (``embeddings_queue`` in ``chroma.sqlite3``) of every write the index holds: the adds of
    ids deleted since are gone with it. Chroma has no call for either (no flush, no purge in
    its API); it does both once ``sync_threshold`` writes have arrived since the last persist,
    so this deletes that many ids that no collection holds (ids it does hold are left out):
    each delete counts as a write and changes nothing."""
    hnsw = (collection.configuration or {}).get("hnsw")
    if not hnsw:  # not an HNSW collection: no log kept for an index
        return
    ids = [FLUSH_ID.format(i) for i in range(int(hnsw.get("sync_threshold") or 1000))]
    held = set(collection.get(ids=ids, include=[])["ids"])
    free = [i for i in ids if i not in held]
    if free:
        collection.delete(ids=free)


def stored_vectors(client: Any, page: int) -> Iterator[Any]:
    """Every vector every collection of ``client`` stores, read ``page`` at a time."""
    for listed in client.list_collections():
        collection = client.get_collection(getattr(listed, "name", listed))
        for offset in range(0, collection.count(), page):
            got = collection.get(include=["embeddings"], limit=page, offset=offset)
            yield from got["embeddings"]
