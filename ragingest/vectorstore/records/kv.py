"""Key-value stores beside the records: one table ``langchain_key_value_stores`` (namespace,
key, value) over the records database when it is PostgreSQL (shared by every machine), else
in a SQLite file beside Chroma.

The table is the one LangChain's ``SQLStore`` (langchain-community) kept, column for column, so
stores written by earlier versions open unchanged; the store itself is ragingest's own
(``KVStore``, a LangChain ``BaseStore[str, bytes]`` on SQLAlchemy Core), so the default path
does not import the sunset langchain-community.

Contract: ``kv_store(persist_dir, records_url, file, namespace, legacy=...)`` returns a
``KVStore`` over rows keyed by ``namespace`` and key. ``legacy``: a ``(table, SELECT)`` pair
naming the table earlier versions kept in that SQLite file and the select that yields its rows
as ``(namespace, key, value)``: the first open copies them into the store and drops the old
table, in one transaction (a collection made before this store still opens). Keys go to the
database in batches (one ``IN (...)`` per batch). ``disposable=True`` (a cache: whatever it
holds can be computed again): a SQLite file found damaged, when opened or on any call, is set
aside as ``<file>.damaged-<UTC time>`` and the store goes on in a new one (logged, and said in
``notes`` for the run's report); any other store raises, since its rows are no copies. A
disposable SQLite file also commits without waiting for the disk (``unsynced``).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

from langchain_core.stores import BaseStore
from sqlalchemy import (
    Column,
    Delete,
    LargeBinary,
    MetaData,
    String,
    Table,
    delete,
    event,
    func,
    insert,
    select,
)
from sqlalchemy.engine import Engine

from ragingest.errors import error_chain
from ragingest.vectorstore.records.database import (
    chunks_of,
    create_tables,
    is_shared,
    records_engine,
)
from ragingest.vectorstore.records.sqlite_local import ThreadLocalConnection

KV_METADATA = MetaData()
KV_TABLE = Table(  # LangChain SQLStore's table (module docstring): same name, columns, indexes
    "langchain_key_value_stores",
    KV_METADATA,
    Column("namespace", String, primary_key=True, index=True, nullable=False),
    Column("key", String, primary_key=True, index=True, nullable=False),
    Column("value", LargeBinary, nullable=False),
)
Legacy = tuple[str, str]
T = TypeVar("T")
log = logging.getLogger(__name__)
# what SQLite says of a damaged file (not of a busy or full one: those pass as they are)
DAMAGED = ("database disk image is malformed", "not a database", "malformed database schema")


_READERS: dict[Path, ThreadLocalConnection] = {}  # per file: each thread's read connection


class KVStore(BaseStore[str, bytes]):
    """The byte values of one ``namespace`` in ``engine``'s key-value table."""

    def __init__(
        self,
        namespace: str,
        engine: Engine,
        local_file: Path | None = None,
        reopen: Callable[[], Engine] | None = None,
    ) -> None:
        self.namespace = namespace
        self.engine = engine
        self.local_file = local_file  # the SQLite file when the table is local (fast reads)
        self.reopen = reopen  # a disposable store's new engine after its file is set aside
        self.notes: list[str] = []  # the damaged files set aside, for the run's report

    def recovering(self, operation: Callable[[], T]) -> T:
        """``operation()`` (a read or write of ``engine``); in a disposable local store whose
        file is damaged, once more in a new file (the damaged one set aside)."""
        try:
            return operation()
        except Exception as exc:
            if self.reopen is None or self.local_file is None or not is_damaged(exc):
                raise
            self.engine.dispose()
            self.notes.append(set_aside_damaged(self.local_file, exc))
            self.engine = self.reopen()
        return operation()

    def mget(self, keys: Sequence[str]) -> list[bytes | None]:
        """The values in key order, None where absent (``_mget``)."""
        return self.recovering(lambda: self._mget(keys))

    def _mget(self, keys: Sequence[str]) -> list[bytes | None]:
        """The values in key order, None where absent. In a SQLite file one ``SELECT`` per
        batch on this thread's own sqlite3 connection: a pooled SQLAlchemy connection costs
        0.5-1 ms a call, the read itself 0.02 ms, and a query reads its parents on every call;
        else a Core ``SELECT`` per batch."""
        found: dict[str, bytes] = {}
        if self.local_file is not None:
            reader = _READERS.get(self.local_file) or _READERS.setdefault(
                self.local_file, ThreadLocalConnection(self.local_file, autocommit=True)
            )
            db = reader.get()
            for part in chunks_of(list(keys)):
                marks = ",".join("?" * len(part))
                rows = db.execute(
                    f"SELECT key, value FROM {KV_TABLE.name} "
                    f"WHERE namespace = ? AND key IN ({marks})",
                    [self.namespace, *part],
                )
                found.update((key, bytes(value)) for key, value in rows)
            return [found.get(key) for key in keys]
        columns = select(KV_TABLE.c.key, KV_TABLE.c.value)
        with self.engine.connect() as connection:
            for part in chunks_of(list(keys)):
                statement = columns.where(
                    KV_TABLE.c.namespace == self.namespace, KV_TABLE.c.key.in_(part)
                )
                found.update((key, bytes(value)) for key, value in connection.execute(statement))
        return [found.get(key) for key in keys]

    def mset(self, key_value_pairs: Sequence[tuple[str, bytes]]) -> None:
        """Set the values (the last one of a repeated key wins), one transaction per batch."""
        self.recovering(lambda: self._mset(key_value_pairs))

    def _mset(self, key_value_pairs: Sequence[tuple[str, bytes]]) -> None:
        for part in chunks_of(list(dict(key_value_pairs).items())):
            with self.engine.begin() as connection:
                connection.execute(self._where([key for key, _ in part]))
                connection.execute(
                    insert(KV_TABLE),
                    [{"namespace": self.namespace, "key": k, "value": v} for k, v in part],
                )

    def mdelete(self, keys: Sequence[str]) -> None:
        """Delete the keys (absent ones are ignored)."""
        self.recovering(lambda: self._mdelete(keys))

    def _mdelete(self, keys: Sequence[str]) -> None:
        for part in chunks_of(list(keys)):
            with self.engine.begin() as connection:
                connection.execute(self._where(part))

    def yield_keys(self, *, prefix: str | None = None) -> Iterator[str]:
        """The keys (those starting with ``prefix``), sorted."""
        yield from self.recovering(lambda: self._keys(prefix))

    def _keys(self, prefix: str | None) -> list[str]:
        statement = select(KV_TABLE.c.key).where(KV_TABLE.c.namespace == self.namespace)
        if prefix:
            statement = statement.where(KV_TABLE.c.key.startswith(prefix, autoescape=True))
        with self.engine.connect() as connection:
            return [row[0] for row in connection.execute(statement.order_by(KV_TABLE.c.key))]

    def count(self) -> int:
        """How many keys the namespace holds."""
        statement = select(func.count()).where(KV_TABLE.c.namespace == self.namespace)

        def counted() -> int:
            with self.engine.connect() as connection:
                return int(connection.execute(statement).scalar_one())

        return self.recovering(counted)

    def _where(self, keys: Sequence[str]) -> Delete:
        return delete(KV_TABLE).where(
            KV_TABLE.c.namespace == self.namespace, KV_TABLE.c.key.in_(list(keys))
        )


def kv_store(
    persist_dir: str | Path | None,
    records_url: str | None,
    file: str,
    namespace: str,
    legacy: Legacy | None = None,
    disposable: bool = False,
) -> KVStore:
    """The store ``namespace`` (see the module docstring)."""
    local = None if is_shared(persist_dir, records_url) else Path(persist_dir or ".") / file
    if not disposable or local is None:
        return KVStore(namespace, kv_engine(persist_dir, records_url, file, legacy), local)

    def reopen() -> Engine:
        return unsynced(kv_engine(persist_dir, records_url, file, None))

    notes: list[str] = []
    try:
        engine = unsynced(kv_engine(persist_dir, records_url, file, legacy))
    except Exception as exc:
        if not is_damaged(exc):
            raise
        notes.append(set_aside_damaged(local, exc))
        engine = reopen()
    store = KVStore(namespace, engine, local, reopen)
    store.notes += notes
    return store


def unsynced(engine: Engine) -> Engine:
    """``engine`` (a disposable store's SQLite file, in WAL mode) committing without waiting
    for the disk (``synchronous = NORMAL``): a killed process still loses nothing committed,
    a power cut at most the last commits, which a cache computes again; a commit per model
    batch then costs no disk sync."""
    if not event.contains(engine, "connect", _normal_sync):
        event.listen(engine, "connect", _normal_sync)
    return engine


def _normal_sync(connection: sqlite3.Connection, _record: object) -> None:
    connection.execute("PRAGMA synchronous = NORMAL")


def is_damaged(exc: BaseException) -> bool:
    """Whether ``exc``, or an error it wraps or was raised from, says a SQLite file is damaged."""
    return any(
        isinstance(e, sqlite3.DatabaseError) and any(m in str(e) for m in DAMAGED)
        for e in error_chain(exc)
    )


def set_aside_damaged(path: Path, exc: BaseException) -> str:
    """Rename a disposable store's damaged SQLite file ``path`` (with its ``-wal`` and
    ``-shm``) to ``<name>.damaged-<UTC time>``, say so in the log; the line, naming both."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
    target = path.with_name(f"{path.name}.damaged-{stamp}")
    for suffix in ("-wal", "-shm", ""):
        part = path.with_name(path.name + suffix)
        if part.exists():
            part.rename(target.with_name(target.name + suffix))
    cause = next((m for e in error_chain(exc) for m in DAMAGED if m in str(e)), str(exc))
    line = (
        f"{path} is damaged ({cause}): a cache, so it was set aside as {target.name} and a new "
        "one built (its vectors are computed again)"
    )
    log.warning("%s", line)
    return line


def kv_engine(
    persist_dir: str | Path | None, records_url: str | None, file: str, legacy: Legacy | None
) -> Engine:
    """The engine holding the key-value table: the records database when shared, else the
    SQLite ``file`` in ``persist_dir`` (its legacy table migrated first)."""
    if is_shared(persist_dir, records_url):
        engine = records_engine(persist_dir, records_url)
    else:
        path = Path(persist_dir or ".") / file
        path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.closing(sqlite3.connect(str(path), timeout=60)) as db:
            db.execute("PRAGMA journal_mode = WAL")  # readers never wait for the writer
        engine = records_engine(persist_dir, f"sqlite:///{path.absolute()}")
    create_tables(engine, KV_METADATA)
    if legacy is not None and not is_shared(persist_dir, records_url):
        migrate(Path(persist_dir or ".") / file, *legacy)
    return engine


def migrate(path: Path, table: str, rows: str) -> bool:
    """Copy the rows of an earlier version's ``table`` (``rows``: a SELECT of ``(namespace,
    key, value)``) into the key-value table of the SQLite file ``path`` and drop ``table``, in
    one write transaction; whether there was one. Concurrent openers: the second finds it gone."""
    if not path.is_file() or not _has(path, table):
        return False
    with contextlib.closing(sqlite3.connect(str(path), timeout=60, isolation_level=None)) as db:
        db.execute("BEGIN IMMEDIATE")
        try:
            if not db.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
            ).fetchone():
                db.execute("ROLLBACK")
                return False
            db.execute(f"INSERT OR REPLACE INTO {KV_TABLE.name} {rows}")
            db.execute(f"DROP TABLE {table}")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
    return True


def _has(path: Path, table: str) -> bool:
    with contextlib.closing(sqlite3.connect(str(path), timeout=60)) as db:
        found = db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
        ).fetchone()
    return found is not None
