"""The record manager of LangChain's indexing API, persisted in SQLite beside Chroma.

``SQLRecordManager`` lacks a way to list the sources it knows, which finding vanished files
needs, so ``IndexRecords`` adds ``list_groups``.
"""

from __future__ import annotations

from pathlib import Path

from langchain_classic.indexes import SQLRecordManager
from langchain_classic.indexes._sql_record_manager import UpsertionRecord
from sqlalchemy import select

RECORDS_FILE = "ragingest_records.sqlite"


class IndexRecords(SQLRecordManager):
    def list_groups(self) -> list[str]:
        """Every source (group id) with records in this namespace."""
        with self._make_session() as session:
            rows = session.execute(
                select(UpsertionRecord.group_id)
                .where(UpsertionRecord.namespace == self.namespace)
                .distinct()
            )
            return sorted(row[0] for row in rows if row[0] is not None)


def record_manager(persist_dir: str | Path, collection: str) -> IndexRecords:
    persist = Path(persist_dir)
    persist.mkdir(parents=True, exist_ok=True)
    manager = IndexRecords(
        namespace=f"chroma/{collection}", db_url=f"sqlite:///{persist / RECORDS_FILE}"
    )
    manager.create_schema()
    return manager
