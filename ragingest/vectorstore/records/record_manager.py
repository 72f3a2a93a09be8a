"""The record manager of LangChain's indexing API, with the journal that makes re-indexing
crash-safe (tables in the records database, ``vectorstore.records``).

``IndexRecords`` is a LangChain ``RecordManager`` (the public interface ``index()`` writes
through) over a ``SQLRecordManager`` plus:

- the journal (``ragingest_journal``): a chunk id is journaled *before* it is added to or
  deleted from Chroma and cleared once the record manager agrees, so a run killed between
  the two writes is finished by the next run (``recover``) and Chroma's ids stay exactly the
  record manager's keys;
- a refresh that keeps sources: ``SQLRecordManager.update`` under ``index()`` refreshes
  unchanged keys with ``group_ids=None``, which would blank their source until the second
  update of the batch (a crash window); here a refresh only moves timestamps;
- an update that writes ``SQLRecordManager.update``'s rows and clears their journal entries in
  one transaction (one commit, one disk sync, a batch).

LangChain's table model comes through the adapter ``vectorstore.langchain_sql``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.indexing import RecordManager
from sqlalchemy import delete, func, select, update
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.orm import Session

from ragingest.vectorstore.records.database import (
    JOURNAL,
    chunks_of,
    ensure_schema,
    namespace,
    records_engine,
    upsert,
)
from ragingest.vectorstore.records.langchain_sql import UPSERTION_RECORD, SQLRecordManager

_SYNC_ONLY = "ragingest's record manager is synchronous (index(), not aindex())"


class IndexRecords(RecordManager):
    """LangChain's ``RecordManager`` interface over a ``SQLRecordManager`` (``sql``), plus
    source listing, a refresh that keeps sources, and the journal. Synchronous only."""

    def __init__(self, namespace: str, engine: Engine) -> None:
        super().__init__(namespace)
        self.engine = engine
        self.sql = SQLRecordManager(namespace, engine=engine)

    def create_schema(self) -> None:
        """Create the record tables if they are missing (idempotent)."""
        self.sql.create_schema()

    def get_time(self) -> float:
        """The database server's current time, as LangChain's ``SQLRecordManager`` gives it."""
        return self.sql.get_time()

    def exists(self, keys: Sequence[str]) -> list[bool]:
        """For each key, whether this namespace holds a record of it (same order as ``keys``)."""
        return self.sql.exists(keys)

    def list_keys(self, **kwargs: Any) -> list[str]:
        """The keys of this namespace, filtered as ``SQLRecordManager.list_keys`` filters them."""
        return self.sql.list_keys(**kwargs)

    def list_groups(self) -> list[str]:
        """Every source (group id) with records in this namespace."""
        t = UPSERTION_RECORD.c
        with Session(self.engine) as session:
            rows = session.execute(
                select(t.group_id).where(t.namespace == self.namespace).distinct()
            )
            return sorted(row[0] for row in rows if row[0] is not None)

    def count(self) -> int:
        """The number of records in this namespace."""
        t = UPSERTION_RECORD.c
        with Session(self.engine) as session:
            return session.execute(
                select(func.count())
                .select_from(UPSERTION_RECORD)
                .where(t.namespace == self.namespace)
            ).scalar_one()

    def update(
        self,
        keys: Sequence[str],
        *,
        group_ids: Sequence[str | None] | None = None,
        time_at_least: float | None = None,
    ) -> None:
        """Record ``keys`` (with their ``group_ids``) as written at ``time_at_least`` or later
        and clear their journal entries, in one transaction; without ``group_ids`` only their
        times are refreshed.

        The rows are ``SQLRecordManager.update``'s (its table, its server time, an upsert on
        ``(key, namespace)``), written here so the journal clears in the same commit: one
        disk sync a batch, not two, and no moment where a key is recorded but still
        journaled."""
        if group_ids is None:
            self._refresh(keys, time_at_least)
            return
        if len(keys) != len(group_ids):
            raise ValueError(f"{len(keys)} keys but {len(group_ids)} group ids")
        now = self._now(time_at_least)
        rows = (
            {"key": key, "namespace": self.namespace, "updated_at": now, "group_id": group}
            for key, group in zip(keys, group_ids, strict=True)
        )
        with self.engine.begin() as connection:
            upsert(connection, UPSERTION_RECORD, rows, conflict=("key", "namespace"))
            self._clear_journal(connection, keys)

    def _now(self, time_at_least: float | None) -> float:
        """The database server's time, refused when under ``time_at_least`` (as LangChain's
        ``SQLRecordManager`` refuses it: a clock that went back)."""
        now = self.get_time()
        if time_at_least and now < time_at_least:
            raise AssertionError(f"Time sync issue: {now} < {time_at_least}")
        return now

    def _refresh(self, keys: Sequence[str], time_at_least: float | None) -> None:
        """Move the timestamps of existing records, leaving their source alone."""
        if not keys:
            return
        now = self._now(time_at_least)
        t = UPSERTION_RECORD.c
        with Session(self.engine) as session:
            for part in chunks_of(list(keys)):
                session.execute(
                    update(UPSERTION_RECORD)
                    .where(t.namespace == self.namespace)
                    .where(t.key.in_(part))
                    .values(updated_at=now)
                )
            session.commit()

    def delete_keys(self, keys: Sequence[str]) -> None:
        """Delete the records of ``keys`` and their journal entries."""
        self.sql.delete_keys(keys)
        self.journal_done(keys)

    async def acreate_schema(self) -> None:
        """Not supported: the record manager is synchronous (``NotImplementedError``)."""
        raise NotImplementedError(_SYNC_ONLY)

    async def aget_time(self) -> float:
        """Not supported: the record manager is synchronous (``NotImplementedError``)."""
        raise NotImplementedError(_SYNC_ONLY)

    async def aupdate(self, keys: Sequence[str], **kwargs: Any) -> None:
        """Not supported: the record manager is synchronous (``NotImplementedError``)."""
        raise NotImplementedError(_SYNC_ONLY)

    async def aexists(self, keys: Sequence[str]) -> list[bool]:
        """Not supported: the record manager is synchronous (``NotImplementedError``)."""
        raise NotImplementedError(_SYNC_ONLY)

    async def alist_keys(self, **kwargs: Any) -> list[str]:
        """Not supported: the record manager is synchronous (``NotImplementedError``)."""
        raise NotImplementedError(_SYNC_ONLY)

    async def adelete_keys(self, keys: Sequence[str]) -> None:
        """Not supported: the record manager is synchronous (``NotImplementedError``)."""
        raise NotImplementedError(_SYNC_ONLY)

    # -- the write-ahead journal -------------------------------------------------------------

    def journal(self, keys: Sequence[str], op: str) -> None:
        """Record the intent to ``op`` ("add" | "delete") these ids in Chroma; committed before
        Chroma is touched."""
        if not keys:
            return
        with self.engine.begin() as connection:
            upsert(
                connection,
                JOURNAL,
                ({"namespace": self.namespace, "key": key, "op": op} for key in keys),
            )

    def journal_done(self, keys: Sequence[str]) -> None:
        """Remove the journal entries of ``keys`` (their writes reached Chroma and the records)."""
        if not keys:
            return
        with self.engine.begin() as connection:
            self._clear_journal(connection, keys)

    def _clear_journal(self, connection: Connection, keys: Sequence[str]) -> None:
        for part in chunks_of(list(keys)):
            connection.execute(
                delete(JOURNAL)
                .where(JOURNAL.c.namespace == self.namespace)
                .where(JOURNAL.c.key.in_(part))
            )

    def journal_items(self) -> list[tuple[str, str]]:
        """``(key, op)`` of every pending journal entry of this namespace, sorted by key."""
        with self.engine.connect() as connection:
            rows = connection.execute(
                select(JOURNAL.c.key, JOURNAL.c.op)
                .where(JOURNAL.c.namespace == self.namespace)
                .order_by(JOURNAL.c.key)
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
        recorded: dict[str, bool] = {}
        for part in chunks_of(added):
            recorded.update(zip(part, self.exists(list(part)), strict=True))
        doomed = [key for key in added if not recorded[key]] + removed
        for part in chunks_of(doomed):
            delete_from_store(list(part))
        for part in chunks_of(removed):
            self.sql.delete_keys(list(part))
        self.journal_done([key for key, _ in items])
        return len(doomed)

    def drop_namespace(self) -> None:
        """Forget every record and journal entry of this namespace."""
        with self.engine.begin() as connection:
            connection.execute(
                delete(UPSERTION_RECORD).where(UPSERTION_RECORD.c.namespace == self.namespace)
            )
            connection.execute(delete(JOURNAL).where(JOURNAL.c.namespace == self.namespace))

    def owners_elsewhere(self, keys: Sequence[str]) -> dict[str, str]:
        """Each of ``keys`` that another namespace of this records database records, with that
        namespace (any ``RecordManager`` over the same table, e.g. LangChain's ``index()``
        under a namespace of its own)."""
        t = UPSERTION_RECORD.c
        found: dict[str, str] = {}
        with self.engine.connect() as connection:
            for part in chunks_of(list(keys)):
                rows = connection.execute(
                    select(t.key, t.namespace)
                    .where(t.key.in_(part))
                    .where(t.namespace != self.namespace)
                )
                found.update((key, name) for key, name in rows)
        return found

    def namespaces(self) -> list[str]:
        """Every namespace with records or journal entries (all collections in this database)."""
        with self.engine.connect() as connection:
            rows = connection.execute(select(UPSERTION_RECORD.c.namespace).distinct()).all()
            journal = connection.execute(select(JOURNAL.c.namespace).distinct()).all()
            return sorted({row[0] for row in rows} | {row[0] for row in journal})


def record_manager(
    persist_dir: str | Path | None, collection: str, records_url: str | None = None
) -> IndexRecords:
    """The record manager of the *physical* Chroma collection ``collection``."""
    engine = ensure_schema(records_engine(persist_dir, records_url))
    return IndexRecords(namespace=namespace(collection), engine=engine)
