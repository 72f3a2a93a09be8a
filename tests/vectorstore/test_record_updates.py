"""The record manager's ``update`` writes the rows LangChain's ``SQLRecordManager.update`` writes
(key, namespace, source; the row's uuid kept on a second update; the server's time, refused
when under ``time_at_least``) and clears the keys' journal entries in the same commit, on
SQLite and on PostgreSQL."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import event, select

from ragingest.vectorstore.records.database import ensure_schema, records_engine
from ragingest.vectorstore.records.langchain_sql import UPSERTION_RECORD, SQLRecordManager
from ragingest.vectorstore.records.record_manager import IndexRecords


@pytest.fixture(params=["sqlite", "postgresql"])
def records_url(request, tmp_path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'records.sqlite'}"
    return str(request.getfixturevalue("pg").create_database(f"t_{uuid.uuid4().hex[:12]}"))


def _rows(engine, namespace: str) -> dict[str, tuple[str | None, float, str]]:
    t = UPSERTION_RECORD.c
    with engine.connect() as connection:
        found = connection.execute(
            select(t.key, t.group_id, t.updated_at, t.uuid).where(t.namespace == namespace)
        )
        return {key: (group, at, row_id) for key, group, at, row_id in found}


def test_update_writes_langchains_rows_and_clears_the_journal_in_one_commit(records_url):
    engine = ensure_schema(records_engine(None, records_url))
    ours, theirs = IndexRecords("chroma/c", engine), SQLRecordManager("lc", engine=engine)
    keys, groups = ["k1", "k2", "k3"], ["a.md", "a.md", "b.md"]
    ours.journal([*keys, "k4"], "add")
    commits: list[int] = []
    event.listen(engine, "commit", lambda connection: commits.append(1))
    began = ours.get_time()
    ours.update(keys, group_ids=groups, time_at_least=began)
    assert len(commits) == 1
    theirs.update(keys, group_ids=groups, time_at_least=began)
    mine, lc = _rows(engine, "chroma/c"), _rows(engine, "lc")
    assert {k: row[0] for k, row in mine.items()} == {k: row[0] for k, row in lc.items()}
    assert {k: row[0] for k, row in mine.items()} == dict(zip(keys, groups, strict=True))
    assert all(row[1] >= began for row in mine.values())
    assert ours.journal_items() == [("k4", "add")]  # only the keys recorded leave the journal

    later = ours.get_time()
    ours.update(["k1"], group_ids=["c.md"], time_at_least=later)
    again = _rows(engine, "chroma/c")
    assert again["k1"][0] == "c.md" and again["k1"][1] >= later
    assert again["k1"][2] == mine["k1"][2]  # the same row, as LangChain updates it
    assert again["k2"] == mine["k2"]
    with pytest.raises(AssertionError, match="Time sync"):
        ours.update(["k1"], group_ids=["d.md"], time_at_least=ours.get_time() + 3600)
    with pytest.raises(ValueError, match="group ids"):
        ours.update(["k1", "k2"], group_ids=["d.md"])
    assert _rows(engine, "chroma/c")["k1"][0] == "c.md"
