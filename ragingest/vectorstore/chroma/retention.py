"""Deleted text leaves the disk within the run that deletes it, and the stores stay bounded
over revisions.

Three things keep a deleted chunk's bytes after Chroma deletes it: Chroma's log
(``embeddings_queue`` in ``chroma.sqlite3``, purged automatically only up to what the HNSW
index has persisted, which by default is every 1 000 writes), the free pages SQLite leaves
behind (in Chroma's file and in ragingest's own beside it: parents, lexical index, records,
embedding cache) and the embedding cache's vectors of texts no collection holds any more. So:

- ``bound_log``: the collection's HNSW index persists every ``LOG_SYNC`` writes (Chroma's
  ``hnsw.sync_threshold``, a setting it allows to change), so its log keeps at most about that
  many rows; set on every run, a no-op when already set.
- ``forget``, at the end of a run that deleted chunks: every collection's log is purged now
  (``maintenance.purge_log``: a collection of a few files never reaches ``LOG_SYNC`` writes,
  and the adds of its deleted chunks would stay in the log), the embedding cache loses the
  vectors that no collection in the directory stores (then it never holds more rows than the
  directory stores vectors), and every SQLite file of the directory is vacuumed (its free
  pages, which still hold deleted text, are dropped; the WAL truncated).
- ``begin`` / ``settle``: the work is journaled (``PENDING_FILE`` in the directory, written
  before the run deletes anything, removed once ``forget`` has done all of it), so a run
  killed between its deletes and the end of ``forget`` leaves the retention owed, and the
  next run does it, whether or not it deletes anything itself.

Only an embedded store's directory is handled: a Chroma server keeps its own files, and a
PostgreSQL records database its own (its ``VACUUM`` is the operator's). Out of reach: the
unused capacity of Chroma's HNSW files, which hnswlib writes from memory it never zeroed
(stray bytes of the writing process, chroma-core/chroma#7688); no public call avoids it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragingest.vectorstore.chroma.maintenance import purge_log, set_sync_threshold, stored_vectors
from ragingest.vectorstore.records.kv import KVStore

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

log = logging.getLogger(__name__)

LOG_SYNC = 100  # Chroma's default HNSW batch size: the threshold may not be below it
PAGE = 1000  # vectors read from Chroma at a time
MARKED, GRID = 32, 1e-5  # a vector's mark: its first components, on this grid (``_marks``)
PENDING_FILE = "ragingest_retention.pending"  # the journal: a run's retention is owed


def begin(persist_dir: Path) -> bool:
    """Journal that this run may delete (``PENDING_FILE``, flushed to disk before any delete);
    whether an earlier run left its retention owed (killed before ``settle``)."""
    journal = persist_dir / PENDING_FILE
    owed = journal.exists()
    if not owed:
        with journal.open("w", encoding="utf-8") as out:
            out.write("a run that may delete chunks started; its retention is not done yet\n")
            out.flush()
            os.fsync(out.fileno())
    return owed


def settle(persist_dir: Path, notes: list[str]) -> None:
    """Remove the journal once the retention is done: ``notes`` empty (what ``forget``
    returned; a file it could not vacuum leaves the retention owed to the next run)."""
    if not notes:
        (persist_dir / PENDING_FILE).unlink(missing_ok=True)


def bound_log(collection: Any) -> None:
    """Make ``collection``'s HNSW index persist every ``LOG_SYNC`` writes (module docstring);
    left as it is when Chroma refuses (a collection whose batch size is larger)."""
    set_sync_threshold(collection, LOG_SYNC)


def prune_cache(cache: KVStore, client: Any) -> int:
    """Delete the cache's vectors that no collection of ``client`` stores; how many went."""
    import numpy as np

    live = {mark for vector in stored_vectors(client, PAGE) for mark in _marks(vector)}
    dead: list[str] = []
    keys = list(cache.yield_keys())
    for start in range(0, len(keys), PAGE):
        part = keys[start : start + PAGE]
        for key, value in zip(part, cache.mget(part), strict=True):
            if value is None:
                continue
            if live.isdisjoint(_marks(np.frombuffer(value, dtype="<f4"))):
                dead.append(key)
    cache.mdelete(dead)
    return len(dead)


def vacuum(persist_dir: Path) -> list[str]:
    """Vacuum every SQLite file in ``persist_dir`` (then truncate its WAL); the files that
    could not be (busy past the timeout), with why."""
    failed = []
    for path in sorted(persist_dir.glob("*.sqlite*")):
        if path.suffix not in (".sqlite", ".sqlite3"):
            continue
        try:
            with contextlib.closing(
                sqlite3.connect(str(path), timeout=60, isolation_level=None)
            ) as db:
                db.execute("VACUUM")
                db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error as exc:
            failed.append(f"{path.name}: {exc}")
    return failed


def forget(persist_dir: Path, client: Any, cache: KVStore | None) -> list[str]:
    """After a run that deleted chunks (module docstring): purge Chroma's logs, prune the
    cache, vacuum the files. Returns notes for the run's report (what could not be done)."""
    notes = []
    for listed in client.list_collections():
        purge_log(client.get_collection(getattr(listed, "name", listed)))
    if cache is not None and cache.local_file is not None:
        gone = prune_cache(cache, client)
        if gone:
            log.info("embedding cache: %d vectors no collection stores removed", gone)
    for failure in vacuum(persist_dir):
        notes.append(f"deleted text may remain on disk until the next run: {failure}")
    return notes


class ChromaRetention:
    """``port.StoreUpkeep`` of the embedded directory ``persist_dir`` (``client``'s): this
    module's ``begin``, ``bound_log``, ``forget`` and ``settle``."""

    def __init__(self, persist_dir: Path, client: Any) -> None:
        self.persist_dir, self.client = persist_dir, client

    def begin(self) -> bool:
        return begin(self.persist_dir)

    def bound(self, name: str) -> None:
        bound_log(self.client.get_collection(name))

    def forget(self, cache: KVStore | None) -> list[str]:
        return forget(self.persist_dir, self.client, cache)

    def settle(self, notes: list[str]) -> None:
        settle(self.persist_dir, notes)


def _marks(vector: ArrayLike) -> tuple[bytes, bytes]:
    """Two marks of a vector that survive Chroma's storing it: a cosine collection keeps it
    normalized (its last bits differ from the model's output), so the marks are its first
    ``MARKED`` components after normalizing, on a grid of ``GRID``, and again on the grid
    shifted by half a step (a component near one grid's boundary is not near the other's)."""
    import numpy as np

    v = np.asarray(vector, dtype=np.float64)
    norm = float(np.linalg.norm(v)) or 1.0
    head = v[:MARKED] / norm / GRID
    return (
        np.round(head).astype(np.int64).tobytes(),
        np.round(head + 0.5).astype(np.int64).tobytes(),
    )
