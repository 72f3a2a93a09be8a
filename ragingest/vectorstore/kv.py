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
database in batches (one ``IN (...)`` per batch).
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path

from langchain_core.stores import BaseStore
from sqlalchemy import (
    Column,
    Delete,
    LargeBinary,
    MetaData,
    String,
    Table,
    delete,
    func,
    insert,
    select,
)
from sqlalchemy.engine import Engine

from ragingest.vectorstore.records import (
    chunks_of,
    create_tables,
    is_shared,
    records_engine,
)
from ragingest.vectorstore.sqlite_local import ThreadLocalConnection

KV_METADATA = MetaData()
KV_TABLE = Table(  # LangChain SQLStore's table (module docstring): same name, columns, indexes
    "langchain_key_value_stores",
    KV_METADATA,
    Column("namespace", String, primary_key=True, index=True, nullable=False),
    Column("key", String, primary_key=True, index=True, nullable=False),
    Column("value", LargeBinary, nullable=False),
)
Legacy = tuple[str, str]


_READERS: dict[Path, ThreadLocalConnection] = {}  # per file: each thread's read connection


class KVStore(BaseStore[str, bytes]):
    """The byte values of one ``namespace`` in ``engine``'s key-value table."""

    def __init__(self, namespace: str, engine: Engine, local_file: Path | None = None) -> None:
        self.namespace = namespace
        self.engine = engine
        self.local_file = local_file  # the SQLite file when the table is local (fast reads)

    def mget(self, keys: Sequence[str]) -> list[bytes | None]:
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
        for part in chunks_of(list(dict(key_value_pairs).items())):
            with self.engine.begin() as connection:
                connection.execute(self._where([key for key, _ in part]))
                connection.execute(
                    insert(KV_TABLE),
                    [{"namespace": self.namespace, "key": k, "value": v} for k, v in part],
                )

    def mdelete(self, keys: Sequence[str]) -> None:
        """Delete the keys (absent ones are ignored)."""
        for part in chunks_of(list(keys)):
            with self.engine.begin() as connection:
                connection.execute(self._where(part))

    def yield_keys(self, *, prefix: str | None = None) -> Iterator[str]:
        """The keys (those starting with ``prefix``), sorted."""
        statement = select(KV_TABLE.c.key).where(KV_TABLE.c.namespace == self.namespace)
        if prefix:
            statement = statement.where(KV_TABLE.c.key.startswith(prefix, autoescape=True))
        with self.engine.connect() as connection:
            keys = [row[0] for row in connection.execute(statement.order_by(KV_TABLE.c.key))]
        yield from keys

    def count(self) -> int:
        """How many keys the namespace holds."""
        statement = select(func.count()).where(KV_TABLE.c.namespace == self.namespace)
        with self.engine.connect() as connection:
            return int(connection.execute(statement).scalar_one())

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
) -> KVStore:
    """The store ``namespace`` (see the module docstring)."""
    engine = kv_engine(persist_dir, records_url, file, legacy)
    local = None if is_shared(persist_dir, records_url) else Path(persist_dir or ".") / file
    return KVStore(namespace, engine, local)


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
