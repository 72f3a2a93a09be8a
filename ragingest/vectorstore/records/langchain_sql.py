"""The adapter to the internals of LangChain's ``SQLRecordManager``: the one module that
imports ``langchain_classic.indexes._sql_record_manager``.

Why: LangChain exports the record manager class but not its table. ragingest needs the table
model to create it inside its own transaction (beside its own tables, under the PostgreSQL
schema lock), to list the sources (group ids) with records, to count them, and to move the
timestamps of unchanged records without touching their source (``records.IndexRecords``). No
public API offers these; if LangChain renames its module, this is the only place to change.
"""

from __future__ import annotations

from langchain_classic.indexes import SQLRecordManager

# no public path to the table (langchain_classic 1.x exports only SQLRecordManager): see above
from langchain_classic.indexes._sql_record_manager import Base as _LangChainBase
from langchain_classic.indexes._sql_record_manager import UpsertionRecord

LANGCHAIN_METADATA = _LangChainBase.metadata  # the record manager's tables
UPSERTION_RECORD = UpsertionRecord.__table__  # its one table: namespace, key, group_id, ...

__all__ = ["LANGCHAIN_METADATA", "UPSERTION_RECORD", "SQLRecordManager", "UpsertionRecord"]
