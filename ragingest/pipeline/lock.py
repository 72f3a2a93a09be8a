"""One writer per collection.

Which lock depends on the records database (``ragingest.vectorstore.records.database``):

- SQLite (the default): ``filelock.FileLock`` (an exclusive ``flock``) on
  ``ragingest_<name>.lock`` in the Chroma directory, with no fallback to a lock file's mere
  existence (that one would outlive a killed run). The holder writes its pid, host and start
  time into the file for the message a second run prints (and for ``ragingest status``).
  ``flock`` is local: on a network filesystem, keep runs on one machine.
- PostgreSQL: a session-level advisory lock in that database, keyed from the collection name
  (``pg_try_advisory_lock``; ``pg_advisory_lock`` with ``wait``), held on a connection of its
  own for the whole run, so writers on different machines that share the records database
  and a Chroma server exclude each other. The holder's pid, host and start time go in
  ``ragingest_writer``, read only while that backend still holds the lock.

Either way the lock dies with its holder, ``kill -9`` included (the kernel drops the flock;
PostgreSQL ends the session of a closed connection), so a crashed run never leaves a stale
lock behind. A second writer fails at once with ``LockedError`` (exit 3) or waits.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import logging
import os
import socket
from pathlib import Path
from typing import TypedDict

from filelock import FileLock, Timeout
from sqlalchemy import delete, func, select, text
from sqlalchemy.engine import Connection, Engine

from ragingest.errors import LockedError
from ragingest.vectorstore.names import safe_name
from ragingest.vectorstore.records.database import (
    DIALECTS,
    WRITER,
    RecordsURLError,
    display_url,
    ensure_schema,
    has_table,
    records_engine,
    upsert,
)

log = logging.getLogger(__name__)


def lock_path(persist_dir: str | Path, collection: str) -> Path:
    """The lock file of ``collection`` in ``persist_dir``."""
    return Path(persist_dir) / f"ragingest_{safe_name(collection)}.lock"


def advisory_key(collection: str) -> int:
    """The PostgreSQL advisory lock key of ``collection``: 63 bits of a sha256."""
    digest = hashlib.sha256(f"ragingest-writer:{collection}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


class Holder(TypedDict, total=False):
    """The run holding a collection's writer lock, as its lock file or row records it."""

    pid: int
    host: str
    started: str  # ISO 8601, UTC


def _describe(holder: Holder | None) -> str:
    if not holder:
        return "another ragingest run"
    where = ""
    if holder.get("host") and holder.get("host") != socket.gethostname():
        where = f", on {holder['host']}"
    return f"another ragingest run (pid {holder.get('pid')}, since {holder.get('started')}{where})"


def _read(path: Path) -> Holder | None:
    try:
        data = path.read_text(encoding="utf-8").strip()
        return json.loads(data) if data else None
    except (OSError, ValueError):
        return None


def _write_holder(fd: int) -> None:
    os.pwrite(fd, json.dumps(_holder_info()).encode(), 0)  # FileLock truncated it on taking it


def _holder_info() -> Holder:
    return {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }


_PG_HOLDER = text(
    "SELECT w.pid, w.host, w.started FROM ragingest_writer AS w JOIN pg_locks AS l "
    "ON l.pid = w.backend_pid AND l.locktype = 'advisory' AND l.granted "
    "AND l.classid::bigint = :hi AND l.objid::bigint = :lo AND l.objsubid = 1 "
    "WHERE w.name = :name"
)


def _pg_holder(connection: Connection, collection: str) -> Holder | None:
    """The writer holding ``collection``'s advisory lock now (a row left by a dead writer
    doesn't count: its backend holds no lock)."""
    key = advisory_key(collection)
    row = connection.execute(
        _PG_HOLDER, {"hi": key >> 32, "lo": key & 0xFFFFFFFF, "name": collection}
    ).first()
    return {"pid": row[0], "host": row[1], "started": row[2]} if row else None


def lock_holder(
    persist_dir: str | Path | None, collection: str, records_url: str | None = None
) -> Holder | None:
    """The run writing ``collection`` now (pid, host, started), or None. Never takes the
    lock itself, so asking can't make a starting writer fail."""
    engine = records_engine(persist_dir, records_url)
    if engine.dialect.name == "postgresql":
        if not has_table(engine, WRITER):
            return None
        with engine.connect() as connection:
            return _pg_holder(connection, collection)
    if persist_dir is None:  # a SQLite records file lives in persist_dir, so this is unreachable
        return None
    holder = _read(lock_path(persist_dir, collection))
    if not holder:
        return None
    if holder.get("host") == socket.gethostname():
        try:
            os.kill(int(holder["pid"]), 0)
        except (ProcessLookupError, ValueError, KeyError):
            return None  # left by a run that was killed
        except PermissionError:
            pass
    return holder


class CollectionLock:
    """``with CollectionLock(dir, name):`` — raises ``LockedError`` at once when another run
    holds it, or waits for it with ``wait=True``. ``records_url`` chooses the kind of lock
    (see the module docstring); None: ``$RAGINGEST_RECORDS_URL`` or the SQLite default."""

    def __init__(
        self,
        persist_dir: str | Path,
        collection: str,
        wait: bool = False,
        records_url: str | None = None,
    ) -> None:
        self.persist_dir = Path(persist_dir)
        self.path = lock_path(persist_dir, collection)
        self.collection = collection
        self.wait = wait
        self.records_url = records_url
        self._file_lock: FileLock | None = None
        self._connection: Connection | None = None

    def _refuse(self, where: object, holder: str) -> LockedError:
        return LockedError(
            f"collection {self.collection!r} in {where} is being written by {holder}; not "
            "starting a second writer. Re-run with --wait to wait for it"
        )

    def __enter__(self) -> CollectionLock:
        engine = records_engine(self.persist_dir, self.records_url)
        dialect = engine.dialect.name
        if dialect == "sqlite":
            self._flock()
        elif dialect == "postgresql":
            self._advisory_lock(engine)
        else:  # records_engine refuses them first
            raise RecordsURLError(
                f"no writer lock for a {dialect!r} records database; supported: "
                + ", ".join(DIALECTS)
            )
        log.info("locked collection %r for writing (pid %d)", self.collection, os.getpid())
        return self

    def _flock(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(
            self.path,
            mode=0o644,
            thread_local=False,  # a run may leave the lock from another thread than took it
            fallback_to_soft=False,
            on_acquired=_write_holder,
        )
        try:
            lock.acquire(blocking=False)
        except Timeout:
            holder = _describe(_read(self.path))
            if not self.wait:
                raise self._refuse(self.path.parent, holder) from None
            log.warning("waiting for %s to finish writing collection %r", holder, self.collection)
            lock.acquire()
        self._file_lock = lock

    def _advisory_lock(self, engine: Engine) -> None:
        ensure_schema(engine)
        key = advisory_key(self.collection)
        # a connection of its own, outside any transaction, for the whole run; never returned
        # to the pool (a session lock would outlive the run there)
        connection = engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        try:
            if not connection.execute(select(func.pg_try_advisory_lock(key))).scalar_one():
                holder = _describe(_pg_holder(connection, self.collection))
                if not self.wait:
                    raise self._refuse(display_url(engine.url), holder)
                log.warning(
                    "waiting for %s to finish writing collection %r", holder, self.collection
                )
                connection.execute(select(func.pg_advisory_lock(key)))
            backend = connection.execute(select(func.pg_backend_pid())).scalar_one()
            upsert(
                connection,
                WRITER,
                [{"name": self.collection, "backend_pid": backend, **_holder_info()}],
            )
        except BaseException:
            connection.invalidate()
            connection.close()
            raise
        self._connection = connection

    def __exit__(self, *exc: object) -> None:
        if self._connection is not None:
            connection, self._connection = self._connection, None
            try:
                connection.execute(
                    delete(WRITER)
                    .where(WRITER.c.name == self.collection)
                    .where(WRITER.c.backend_pid == func.pg_backend_pid())
                )
                held = connection.execute(
                    select(func.pg_advisory_unlock(advisory_key(self.collection)))
                ).scalar_one()
                if not held:
                    log.warning(
                        "the lock of collection %r was lost during the run (its database "
                        "connection dropped); another writer may have started",
                        self.collection,
                    )
            except Exception as err:  # the connection is gone: so is its lock
                log.warning("releasing the lock of collection %r: %s", self.collection, err)
            finally:
                with contextlib.suppress(Exception):
                    connection.invalidate()  # closes it: nothing it held survives
                connection.close()
        if self._file_lock is None:
            return
        lock, self._file_lock = self._file_lock, None
        try:
            os.truncate(self.path, 0)  # no holder named once it is free
        finally:
            lock.release()
