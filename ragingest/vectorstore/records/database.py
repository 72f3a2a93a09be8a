"""The record manager of LangChain's indexing API plus the small tables that make re-indexing
crash-safe and rebuilds swappable, in one SQL database: the *records database*.

Its SQLAlchemy URL is ``records_url`` (``--records-url``, else ``$RAGINGEST_RECORDS_URL``), by
default the SQLite file ``ragingest_records.sqlite`` in the Chroma directory. SQLite suits one
machine; PostgreSQL (``postgresql+psycopg://USER@HOST:PORT/DB``) lets writers on several
machines share one Chroma server: the records, file states and aliases are then the same for
all of them, and the writer lock is an advisory lock in that database
(``ragingest.pipeline.lock``). One records database serves one set of Chroma collections (a
directory or a server): its rows are keyed by collection name. ``records_engine`` is the one
place that turns ``(persist_dir, records_url)`` into an engine (cached per URL per process);
no other dialect is accepted (LangChain's ``SQLRecordManager`` upserts for these two only).

The database holds:

- ``upsertion_record``: LangChain's ``SQLRecordManager`` table, one namespace per physical
  Chroma collection (``chroma/<name>``);
- ``ragingest_journal``: write-ahead intents. A chunk id is journaled *before* it is added to
  or deleted from Chroma and cleared once the record manager agrees, so a run killed between
  the two writes is finished by the next run (``IndexRecords.recover``) and Chroma's ids stay
  exactly the record manager's keys;
- ``ragingest_alias``: the user-facing collection name → the physical Chroma collection that
  serves it (``live``) and the one a ``--rebuild`` is filling (``building``). Chroma can't
  rename a collection in every version; switching ``live`` is one committed row;
- ``ragingest_file_state`` (used by ``ragingest.pipeline.state``);
- ``ragingest_writer``: who holds a PostgreSQL writer lock, for the message a second writer
  prints (``ragingest.pipeline.lock``).

The ragingest tables are SQLAlchemy Core tables on one ``MetaData``; upserts are
``INSERT ... ON CONFLICT DO UPDATE`` of the dialect (SQLite and PostgreSQL share the form).

The record manager and its journal are ``vectorstore.record_manager``, the collection
aliases ``vectorstore.aliases``; LangChain's table model comes through the adapter
``vectorstore.langchain_sql``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Sequence
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from sqlalchemy import (
    BigInteger,
    Column,
    Float,
    Integer,
    MetaData,
    Table,
    Text,
    create_engine,
    func,
    inspect,
    select,
)
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.pool import NullPool

from ragingest.errors import MissingExtraError, RagIngestError
from ragingest.vectorstore.records.location import (  # noqa: F401 - the location, re-exported
    ALIAS_TABLE,
    RECORDS_FILE,
    RECORDS_URL_ENV,
    creation_lock,
    default_records_url,
    is_shared,
    records_path,
    records_url_for,
)

DIALECTS = ("sqlite", "postgresql")
_CHUNK = 500  # keys per IN (...) list
_SCHEMA_LOCK = 0x7261_6769_6E67_7374  # pg_advisory_xact_lock key for concurrent CREATE TABLEs

METADATA = MetaData()
JOURNAL = Table(
    "ragingest_journal",
    METADATA,
    Column("namespace", Text, primary_key=True),
    Column("key", Text, primary_key=True),
    Column("op", Text, nullable=False),
)
ALIAS = Table(
    ALIAS_TABLE,
    METADATA,
    Column("name", Text, primary_key=True),
    Column("live", Text, nullable=False),
    Column("building", Text),
    Column("generation", Integer, nullable=False, server_default="0"),
)
FILE_STATE = Table(
    "ragingest_file_state",
    METADATA,
    Column("namespace", Text, primary_key=True),
    Column("source", Text, primary_key=True),
    Column("size", BigInteger, nullable=False),
    Column("mtime_ns", BigInteger, nullable=False),
    Column("sha256", Text, nullable=False),
    Column("chunks", Integer, nullable=False),
    Column("version", Text, nullable=False),
    Column("updated_at", Float, nullable=False),
    Column("access", Text),  # JSON list of the file's readers under an access policy
)
# columns added to a table after its first release: (table, column, SQL type), added to a
# database made before them
ADDED_COLUMNS = ((FILE_STATE, "access", "TEXT"),)
WRITER = Table(
    "ragingest_writer",
    METADATA,
    Column("name", Text, primary_key=True),
    Column("pid", Integer, nullable=False),
    Column("host", Text, nullable=False),
    Column("started", Text, nullable=False),
    Column("backend_pid", Integer, nullable=False),
)

# the read gate's write generation per collection, beside its advisory locks (``gate``)
GENERATION_METADATA = MetaData()
GENERATION = Table(
    "ragingest_gate_generation",
    GENERATION_METADATA,
    Column("gate_key", BigInteger, primary_key=True),
    Column("generation", BigInteger, nullable=False),
)


class RecordsURLError(RagIngestError, ValueError):
    """The records URL names a database ragingest can't use."""


def display_url(url: str | URL) -> str:
    """The URL with its password hidden, for messages."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "<unparsable URL>"


_ENGINES: dict[tuple[int, str], Engine] = {}
_SCHEMA_READY: set[tuple[int, str] | tuple[int, str, int]] = set()
_GUARD = threading.Lock()


def records_engine(persist_dir: str | Path | None, records_url: str | None = None) -> Engine:
    """The engine of the records database (see ``records_url_for``), one per URL per process
    (a forked child makes its own). Refuses dialects other than SQLite and PostgreSQL."""
    url = records_url_for(persist_dir, records_url)
    key = (os.getpid(), url)
    with _GUARD:
        engine = _ENGINES.get(key)
        if engine is None:
            engine = _ENGINES[key] = _create_engine(url)
    return engine


def _create_engine(url: str) -> Engine:
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise RecordsURLError(
            f"bad records URL {url!r}: use sqlite:///FILE or postgresql+psycopg://USER@HOST/DB"
        ) from exc
    backend = parsed.get_backend_name()
    if backend not in DIALECTS:
        raise RecordsURLError(
            f"records database {display_url(parsed)}: {backend!r} is not supported; use "
            "SQLite (sqlite:///FILE, the default) or PostgreSQL "
            "(postgresql+psycopg://USER@HOST:PORT/DB)"
        )
    if backend == "sqlite":
        # a connection per use, as sqlite3 was used before: nothing pooled outlives a file
        # that is deleted and made again; busy_timeout 60 s (one writer at a time)
        return create_engine(parsed, poolclass=NullPool, connect_args={"timeout": 60})
    if parsed.drivername == "postgresql":  # SQLAlchemy's default driver is psycopg2
        parsed = parsed.set(drivername="postgresql+psycopg")
    if parsed.drivername == "postgresql+psycopg" and find_spec("psycopg") is None:
        raise MissingExtraError(f"the records database {display_url(parsed)}", "postgres")
    return create_engine(parsed, pool_pre_ping=True, connect_args={"application_name": "ragingest"})


def _sqlite_file(engine: Engine) -> Path | None:
    database = engine.url.database
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    return Path(database)


def ensure_schema(engine: Engine) -> Engine:
    """Create the tables that are missing (ragingest's and LangChain's); returns ``engine``.
    SQLite: the file's folder too, and WAL mode (readers never wait for the writer)."""
    # imported here: it loads langchain_classic.indexes (~0.5 s), which reading (a query,
    # status) does not need
    from ragingest.vectorstore.records.langchain_sql import LANGCHAIN_METADATA

    if engine.dialect.name == "sqlite":
        path = _sqlite_file(engine)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        # two first runs at once must not both CREATE ("table ... already exists")
        with (
            creation_lock(path),
            engine.connect() as connection,
        ):
            connection.exec_driver_sql("PRAGMA journal_mode = WAL")
            METADATA.create_all(connection)
            LANGCHAIN_METADATA.create_all(connection)
            _add_columns(connection)
            connection.commit()
        return engine
    key = (os.getpid(), engine.url.render_as_string(hide_password=False))
    if key in _SCHEMA_READY:
        return engine
    with engine.begin() as connection:  # two writers starting at once must not both CREATE
        connection.execute(select(func.pg_advisory_xact_lock(_SCHEMA_LOCK)))
        METADATA.create_all(connection)
        LANGCHAIN_METADATA.create_all(connection)
        _add_columns(connection)
    _SCHEMA_READY.add(key)
    return engine


def _add_columns(connection: Connection) -> None:
    """Add the ``ADDED_COLUMNS`` a database made by an earlier version lacks."""
    for table, column, kind in ADDED_COLUMNS:
        present = {c["name"] for c in inspect(connection).get_columns(table.name)}
        if column not in present:
            connection.exec_driver_sql(f"ALTER TABLE {table.name} ADD COLUMN {column} {kind}")


def create_tables(engine: Engine, metadata: MetaData) -> None:
    """Create the missing tables of ``metadata`` (the stores kept beside the records: parents,
    lexical index, embedding cache), once per process per database; on PostgreSQL under the
    same lock as ``ensure_schema``, so two processes starting at once do not both CREATE."""
    key = (os.getpid(), engine.url.render_as_string(hide_password=False), id(metadata))
    if key in _SCHEMA_READY:
        return
    with engine.begin() as connection:
        if engine.dialect.name == "postgresql":
            connection.execute(select(func.pg_advisory_xact_lock(_SCHEMA_LOCK)))
        metadata.create_all(connection)
    if engine.dialect.name == "postgresql":  # a SQLite file may be deleted and made again
        _SCHEMA_READY.add(key)


def has_table(engine: Engine, table: Table) -> bool:
    """Whether ``table`` exists, creating nothing (no SQLite file either)."""
    if engine.dialect.name == "sqlite":
        path = _sqlite_file(engine)
        if path is not None and not path.is_file():
            return False
    with engine.connect() as connection:
        return inspect(connection).has_table(table.name)


def upsert(
    connection: Connection,
    table: Table,
    rows: Iterable[dict[str, Any]],
    conflict: Sequence[str] = (),
) -> None:
    """Insert ``rows``, replacing those with the same primary key, or the same ``conflict``
    columns (a unique constraint; the primary key then is kept), the last of duplicates
    winning, with the dialect's ``INSERT ... ON CONFLICT (...) DO UPDATE``."""
    primary = [column.name for column in table.primary_key.columns]
    keys = list(conflict) or primary
    fixed = {*primary, *keys}  # what a conflict leaves as it is
    unique = list({tuple(row[k] for k in keys): row for row in rows}.values())
    if not unique:
        return
    statement: Any  # each dialect's Insert has its own on_conflict_do_update
    if connection.dialect.name == "sqlite":
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        statement = sqlite_insert(table)
    elif connection.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as postgresql_insert

        statement = postgresql_insert(table)
    else:
        raise RecordsURLError(f"no upsert for dialect {connection.dialect.name!r}")
    statement = statement.on_conflict_do_update(
        index_elements=keys,
        set_={c.name: statement.excluded[c.name] for c in table.columns if c.name not in fixed},
    )
    for part in chunks_of(unique):
        connection.execute(statement, list(part))


NAMESPACE_PREFIX = "chroma/"


def namespace(physical: str) -> str:
    """The record-manager namespace of a physical collection, whatever its store (the prefix
    dates from Chroma being the only one; existing records keep their rows)."""
    return f"{NAMESPACE_PREFIX}{physical}"


def physical_of(name: str) -> str:
    """``namespace``'s inverse (a namespace of other code is returned as it is)."""
    return name.removeprefix(NAMESPACE_PREFIX)


def chunks_of(items: Sequence[Any]) -> list[Sequence[Any]]:
    return [items[i : i + _CHUNK] for i in range(0, len(items), _CHUNK)]
