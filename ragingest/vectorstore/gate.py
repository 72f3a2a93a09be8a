"""The read gate: a readers-writer lock per physical collection, so a query never sees half of
a write group (some of a file's new chunks beside its old ones, or Chroma ahead of the lexical
index and the parents).

Chroma has no transactions: the writer adds a file's new chunks, then deletes its stale ones,
and writes the lexical index and the parents beside it. The writer holds the gate exclusively
for that stretch of each group (``Writer.write``: the embedding happens before, so the gate is
held for the store writes alone, milliseconds per chunk); a search holds it shared while it
reads Chroma, the lexical index and the parents. A reader thus waits at most one group write.

Where the lock lives: with a PostgreSQL records database, transaction-scoped advisory locks
there (``pg_advisory_xact_lock`` / ``pg_advisory_xact_lock_shared``, so they hold across
machines and die with a crashed process's connection); else ``flock`` on
``ragingest_gate.lock`` in the Chroma directory (one machine, which is where such a store is
read). A reader that can't make the lock file (a read-only store: nobody writes it) reads
without the gate.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

from ragingest.vectorstore.records_location import is_shared

GATE_FILE = "ragingest_gate.lock"


class ReadGate:
    """``with gate.reading():`` (shared) and ``with gate.writing():`` (exclusive)."""

    def __init__(
        self, persist_dir: str | Path | None, physical: str, records_url: str | None = None
    ) -> None:
        self.persist_dir, self.physical, self.records_url = persist_dir, physical, records_url
        self.shared = is_shared(persist_dir, records_url)
        digest = hashlib.sha256(f"ragingest-gate/{physical}".encode()).digest()
        self.key = int.from_bytes(digest[:8], "big", signed=True)

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        with self._hold(exclusive=False):
            yield

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        with self._hold(exclusive=True):
            yield

    @contextlib.contextmanager
    def _hold(self, exclusive: bool) -> Iterator[None]:
        if self.shared:
            with self._advisory(exclusive):
                yield
            return
        with self._flock(exclusive):
            yield

    @contextlib.contextmanager
    def _advisory(self, exclusive: bool) -> Iterator[None]:
        from sqlalchemy import func, select

        from ragingest.vectorstore.records import records_engine

        engine = records_engine(self.persist_dir, self.records_url)
        lock = func.pg_advisory_xact_lock if exclusive else func.pg_advisory_xact_lock_shared
        with engine.connect() as connection, connection.begin():
            connection.execute(select(lock(self.key)))
            yield

    @contextlib.contextmanager
    def _flock(self, exclusive: bool) -> Iterator[None]:
        try:
            import fcntl
        except ImportError:  # no flock (Windows): one process at a time is all it can do
            yield
            return
        path = Path(self.persist_dir or ".") / GATE_FILE
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            try:
                fd = os.open(path, os.O_RDONLY)
            except OSError:  # a read-only store without the file: nobody writes it
                yield
                return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            yield
        finally:
            os.close(fd)  # closing releases the lock


def read_gate(
    persist_dir: str | Path | None, physical: str, records_url: str | None = None
) -> ReadGate:
    return ReadGate(persist_dir, physical, records_url)


@contextlib.contextmanager
def reading(store: object) -> Iterator[None]:
    """Hold ``store``'s gate shared (a store without one: nothing to hold)."""
    gate = getattr(store, "gate", None)
    if gate is None:
        yield
        return
    with gate.reading():
        yield
