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
import contextvars
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ragingest.vectorstore.records.location import is_shared

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection

GATE_FILE = "ragingest_gate.lock"
COUNTER_BYTES = 20  # the generation, in decimal, at the start of the lock file

# the gates this thread holds exclusively, by key
_WRITING: contextvars.ContextVar[frozenset[int]] = contextvars.ContextVar(
    "ragingest_writing", default=frozenset()
)
# the generation read when this thread took a gate shared, per gate key (None: not held)
_HELD: contextvars.ContextVar[dict[int, int] | None] = contextvars.ContextVar(
    "ragingest_held_generation", default=None
)


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
        """Held shared; ``generation()`` inside it is the value read when it was taken."""
        outer = _HELD.get()
        if outer is not None and self.key in outer:  # already held by this thread
            yield
            return
        with self._hold(exclusive=False) as generation:
            token = _HELD.set({**(outer or {}), self.key: generation})
            try:
                yield
            finally:
                _HELD.reset(token)

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """Held exclusively; the generation moves when it is taken and before it is let go.
        Re-entrant in one thread (the writer holds it around a group, the store's own writes
        take it again)."""
        outer = _WRITING.get()
        if self.key in outer:
            yield
            return
        with self._hold(exclusive=True):
            token = _WRITING.set(outer | {self.key})
            try:
                yield
            finally:
                _WRITING.reset(token)

    def generation(self) -> int:
        """The write generation: stable while this thread holds the gate shared (the value read
        when it was taken), else read now (module docstring)."""
        held = _HELD.get()
        if held is not None and self.key in held:
            return held[self.key]
        if self.shared:
            return self._advisory_generation(None)
        try:
            fd = os.open(Path(self.persist_dir or ".") / GATE_FILE, os.O_RDONLY)
        except OSError:
            return 0
        try:
            return _counter(fd)
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def _hold(self, exclusive: bool) -> Iterator[int]:
        if self.shared:
            with self._advisory(exclusive) as generation:
                yield generation
            return
        with self._flock(exclusive) as generation:
            yield generation

    @contextlib.contextmanager
    def _advisory(self, exclusive: bool) -> Iterator[int]:
        from sqlalchemy import func, select

        from ragingest.vectorstore.records.database import (
            GENERATION_METADATA,
            create_tables,
            records_engine,
        )

        engine = records_engine(self.persist_dir, self.records_url)
        lock = func.pg_advisory_xact_lock if exclusive else func.pg_advisory_xact_lock_shared
        if exclusive:
            create_tables(engine, GENERATION_METADATA)
        with engine.connect() as connection, connection.begin():
            connection.execute(select(lock(self.key)))
            if not exclusive:
                yield self._advisory_generation(connection)
                return
            self._bump(engine)  # committed now: a writer that dies mid-write still moved it
            try:
                yield 0
            finally:
                self._bump(connection)  # committed with the lock's release

    def _advisory_generation(self, connection: Connection | None) -> int:
        """The generation row, read on ``connection`` (inside its transaction, in a savepoint:
        a missing table, nothing written since it came in, reads 0 and keeps the transaction
        and its lock) or on a connection of its own."""
        from sqlalchemy import select
        from sqlalchemy.exc import ProgrammingError

        from ragingest.vectorstore.records.database import GENERATION, records_engine

        query = select(GENERATION.c.generation).where(GENERATION.c.gate_key == self.key)
        with contextlib.ExitStack() as stack:
            if connection is None:
                engine = records_engine(self.persist_dir, self.records_url)
                connection = stack.enter_context(engine.connect())
            try:
                with connection.begin_nested():
                    value = connection.execute(query).scalar()
            except ProgrammingError:
                return 0
        return int(value or 0)

    def _bump(self, target: object) -> None:
        from sqlalchemy.dialects.postgresql import insert
        from sqlalchemy.engine import Engine

        from ragingest.vectorstore.records.database import GENERATION

        statement = insert(GENERATION).values(gate_key=self.key, generation=1)
        statement = statement.on_conflict_do_update(
            index_elements=[GENERATION.c.gate_key],
            set_={"generation": GENERATION.c.generation + 1},
        )
        if isinstance(target, Engine):
            with target.begin() as connection:
                connection.execute(statement)
        else:
            target.execute(statement)  # type: ignore[attr-defined]

    @contextlib.contextmanager
    def _flock(self, exclusive: bool) -> Iterator[int]:
        try:
            import fcntl
        except ImportError:  # no flock (Windows): one process at a time is all it can do
            yield 0
            return
        path = Path(self.persist_dir or ".") / GATE_FILE
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            try:
                fd = os.open(path, os.O_RDONLY)
            except OSError:  # a read-only store without the file: nobody writes it
                yield 0
                return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            if not exclusive:
                yield _counter(fd)
                return
            _write_counter(fd, _counter(fd) + 1)
            try:
                yield 0
            finally:
                _write_counter(fd, _counter(fd) + 1)
        finally:
            os.close(fd)  # closing releases the lock


def _counter(fd: int) -> int:
    """The generation stored at the start of the lock file (0: none yet)."""
    text = os.pread(fd, COUNTER_BYTES, 0).strip(b"\0 \n")
    return int(text) if text.isdigit() else 0


def _write_counter(fd: int, value: int) -> None:
    os.pwrite(fd, str(value).encode().rjust(COUNTER_BYTES), 0)


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
