"""The record manager of LangChain's indexing API, persisted in SQLite beside Chroma, plus the
two small tables that make re-indexing crash-safe and rebuilds swappable.

One SQLite file (``ragingest_records.sqlite`` in the Chroma directory) holds:

- ``upsertion_record``: LangChain's ``SQLRecordManager`` table, one namespace per physical
  Chroma collection (``chroma/<name>``);
- ``ragingest_journal``: write-ahead intents. A chunk id is journaled *before* it is added to
  or deleted from Chroma and cleared once the record manager agrees, so a run killed between
  the two writes is finished by the next run (``IndexRecords.recover``) and Chroma's ids stay
  exactly the record manager's keys;
- ``ragingest_alias``: the user-facing collection name → the physical Chroma collection that
  serves it (``live``) and the one a ``--rebuild`` is filling (``building``). Chroma can't
  rename a collection in every version; switching ``live`` is one SQLite commit;
- ``ragingest_file_state`` (owned by ``ragingest.ingest.state``).

``IndexRecords`` also fixes a crash window of ``SQLRecordManager`` under ``index()``: a
refresh of unchanged keys passes ``group_ids=None``, which would blank their source until the
second update of the batch; here a refresh only moves timestamps.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_classic.indexes import SQLRecordManager
from langchain_classic.indexes._sql_record_manager import UpsertionRecord
from sqlalchemy import delete, func, select, text, update

RECORDS_FILE = "ragingest_records.sqlite"
_CHUNK = 500  # SQL parameters per statement

_SCHEMA = """
CREATE TABLE IF NOT EXISTS ragingest_journal (
    namespace TEXT NOT NULL, key TEXT NOT NULL, op TEXT NOT NULL,
    PRIMARY KEY (namespace, key));
CREATE TABLE IF NOT EXISTS ragingest_alias (
    name TEXT PRIMARY KEY, live TEXT NOT NULL, building TEXT,
    generation INTEGER NOT NULL DEFAULT 0);
"""


def records_path(persist_dir: str | Path) -> Path:
    return Path(persist_dir) / RECORDS_FILE


def namespace(physical: str) -> str:
    """The record-manager namespace of a physical Chroma collection."""
    return f"chroma/{physical}"


def connect(path: str | Path) -> sqlite3.Connection:
    """An autocommit connection; callers open their own ``BEGIN IMMEDIATE`` transactions."""
    connection = sqlite3.connect(str(path), timeout=60, isolation_level=None)
    connection.execute("PRAGMA busy_timeout = 60000")
    return connection


def ensure_schema(persist_dir: str | Path) -> Path:
    path = records_path(persist_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = connect(path)
    try:
        connection.execute("PRAGMA journal_mode = WAL")  # readers never wait for the writer
        connection.executescript(_SCHEMA)
    finally:
        connection.close()
    return path


def _chunks(items: Sequence[Any]) -> list[Sequence[Any]]:
    return [items[i : i + _CHUNK] for i in range(0, len(items), _CHUNK)]


class IndexRecords(SQLRecordManager):
    """``SQLRecordManager`` + source listing, a refresh that keeps sources, and the journal."""

    def list_groups(self) -> list[str]:
        """Every source (group id) with records in this namespace."""
        with self._make_session() as session:
            rows = session.execute(
                select(UpsertionRecord.group_id)
                .where(UpsertionRecord.namespace == self.namespace)
                .distinct()
            )
            return sorted(row[0] for row in rows if row[0] is not None)

    def count(self) -> int:
        with self._make_session() as session:
            return session.execute(
                select(func.count())
                .select_from(UpsertionRecord)
                .where(UpsertionRecord.namespace == self.namespace)
            ).scalar_one()

    def all_keys(self) -> list[str]:
        return self.list_keys()

    def update(
        self,
        keys: Sequence[str],
        *,
        group_ids: Sequence[str | None] | None = None,
        time_at_least: float | None = None,
    ) -> None:
        if group_ids is None:
            self._refresh(keys, time_at_least)
            return
        super().update(keys, group_ids=group_ids, time_at_least=time_at_least)
        self.journal_done(keys)

    def _refresh(self, keys: Sequence[str], time_at_least: float | None) -> None:
        """Move the timestamps of existing records, leaving their source alone."""
        if not keys:
            return
        now = self.get_time()
        if time_at_least and now < time_at_least:
            raise AssertionError(f"Time sync issue: {now} < {time_at_least}")
        with self._make_session() as session:
            for part in _chunks(list(keys)):
                session.execute(
                    update(UpsertionRecord)
                    .where(UpsertionRecord.namespace == self.namespace)
                    .where(UpsertionRecord.key.in_(part))
                    .values(updated_at=now)
                )
            session.commit()

    def delete_keys(self, keys: Sequence[str]) -> None:
        super().delete_keys(keys)
        self.journal_done(keys)

    # -- the write-ahead journal -------------------------------------------------------------

    def journal(self, keys: Sequence[str], op: str) -> None:
        """Record the intent to ``op`` ("add" | "delete") these ids in Chroma; committed before
        Chroma is touched."""
        if not keys:
            return
        rows = [{"ns": self.namespace, "key": key, "op": op} for key in keys]
        with self._make_session() as session:
            session.execute(
                text(
                    "INSERT OR REPLACE INTO ragingest_journal (namespace, key, op) "
                    "VALUES (:ns, :key, :op)"
                ),
                rows,
            )
            session.commit()

    def journal_done(self, keys: Sequence[str]) -> None:
        if not keys:
            return
        rows = [{"ns": self.namespace, "key": key} for key in keys]
        with self._make_session() as session:
            session.execute(
                text("DELETE FROM ragingest_journal WHERE namespace = :ns AND key = :key"), rows
            )
            session.commit()

    def journal_items(self) -> list[tuple[str, str]]:
        with self._make_session() as session:
            rows = session.execute(
                text("SELECT key, op FROM ragingest_journal WHERE namespace = :ns ORDER BY key"),
                {"ns": self.namespace},
            )
            return [(row[0], row[1]) for row in rows]

    def recover(self, delete_from_store: Any) -> int:
        """Finish what a killed run left half done: ids journaled for adding that never reached
        the record manager and ids journaled for deleting leave Chroma (and the records).
        ``delete_from_store(ids)`` deletes from Chroma without journaling. Returns the count."""
        items = self.journal_items()
        if not items:
            return 0
        added = [key for key, op in items if op == "add"]
        removed = [key for key, op in items if op != "add"]
        recorded = dict(zip(added, self.exists(added), strict=True)) if added else {}
        doomed = [key for key in added if not recorded[key]] + removed
        for part in _chunks(doomed):
            delete_from_store(list(part))
        if removed:
            super().delete_keys(removed)
        self.journal_done([key for key, _ in items])
        return len(doomed)

    def drop_namespace(self) -> None:
        """Forget every record and journal entry of this namespace."""
        with self._make_session() as session:
            session.execute(
                delete(UpsertionRecord).where(UpsertionRecord.namespace == self.namespace)
            )
            session.execute(
                text("DELETE FROM ragingest_journal WHERE namespace = :ns"), {"ns": self.namespace}
            )
            session.commit()

    def namespaces(self) -> list[str]:
        """Every namespace with records or journal entries (all collections in this file)."""
        with self._make_session() as session:
            rows = session.execute(select(UpsertionRecord.namespace).distinct()).all()
            journal = session.execute(text("SELECT DISTINCT namespace FROM ragingest_journal"))
            return sorted({row[0] for row in rows} | {row[0] for row in journal})


def record_manager(persist_dir: str | Path, collection: str) -> IndexRecords:
    """The record manager of the *physical* Chroma collection ``collection``."""
    path = ensure_schema(persist_dir)
    manager = IndexRecords(namespace=namespace(collection), db_url=f"sqlite:///{path}")
    manager.create_schema()
    return manager


# -- collection aliases ------------------------------------------------------------------------


@dataclass
class Alias:
    name: str  # what users type
    live: str  # the physical Chroma collection serving it
    building: str | None = None  # the physical collection a --rebuild is filling
    generation: int = 0


class Catalog:
    """The alias table: which physical collection serves a collection name."""

    def __init__(self, persist_dir: str | Path) -> None:
        self.path = ensure_schema(persist_dir)

    def get(self, name: str) -> Alias:
        connection = connect(self.path)
        try:
            row = connection.execute(
                "SELECT live, building, generation FROM ragingest_alias WHERE name = ?", (name,)
            ).fetchone()
        finally:
            connection.close()
        return Alias(name, row[0], row[1], row[2]) if row else Alias(name, name)

    def _write(self, alias: Alias) -> None:
        connection = connect(self.path)
        try:
            connection.execute("BEGIN IMMEDIATE")
            connection.execute(
                "INSERT OR REPLACE INTO ragingest_alias (name, live, building, generation) "
                "VALUES (?, ?, ?, ?)",
                (alias.name, alias.live, alias.building, alias.generation),
            )
            connection.execute("COMMIT")
        finally:
            connection.close()

    def start_build(self, name: str) -> str:
        """Name (and record) a new physical collection for rebuilding ``name``."""
        alias = self.get(name)
        alias.generation += 1
        alias.building = f"{name}__{alias.generation}"
        self._write(alias)
        return alias.building

    def drop_build(self, name: str) -> None:
        alias = self.get(name)
        alias.building = None
        self._write(alias)

    def swap(self, name: str) -> str:
        """Make the finished build live, in one commit; returns the physical name it replaced."""
        alias = self.get(name)
        if not alias.building:
            raise RuntimeError(f"no rebuild of {name!r} to swap in")
        old, alias.live, alias.building = alias.live, alias.building, None
        self._write(alias)
        return old


def resolve_collection(persist_dir: str | Path, name: str) -> str:
    """The physical Chroma collection serving ``name`` (``name`` itself unless a rebuild
    swapped another in). Reads only; creates nothing."""
    path = records_path(persist_dir)
    if not path.is_file():
        return name
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=60)
        try:
            row = connection.execute(
                "SELECT live FROM ragingest_alias WHERE name = ?", (name,)
            ).fetchone()
        finally:
            connection.close()
    except sqlite3.OperationalError:  # no alias table yet
        return name
    return row[0] if row else name
