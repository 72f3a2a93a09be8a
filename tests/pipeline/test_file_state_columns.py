"""A records database made before the file states held readers gets the column on first use
(SQLite and PostgreSQL), and its rows read back with no readers (no policy)."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, text

from ragingest.pipeline.state import FileStamp, FileState, FileStates
from ragingest.vectorstore.records.database import RECORDS_FILE
from tests.postgres import postgres_server, server_bin

OLD_TABLE = (
    "CREATE TABLE ragingest_file_state (namespace TEXT NOT NULL, source TEXT NOT NULL, "
    "size BIGINT NOT NULL, mtime_ns BIGINT NOT NULL, sha256 TEXT NOT NULL, chunks "
    "INTEGER NOT NULL, version TEXT NOT NULL, updated_at FLOAT NOT NULL, "
    "PRIMARY KEY (namespace, source))"
)
OLD_ROW = "INSERT INTO ragingest_file_state VALUES ('chroma/kb', 'a.md', 1, 2, 'ab', 3, 'v', 0.0)"


@pytest.fixture(params=["sqlite", "postgresql"])
def records_url(request, tmp_path):
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / RECORDS_FILE}"
        return
    if server_bin() is None:
        pytest.skip("PostgreSQL server binaries not installed (scripts/setup_test_system.sh)")
    with postgres_server() as server:
        yield server.create_database("old_records")


def test_an_earlier_file_state_table_gets_the_access_column(tmp_path, records_url):
    old = create_engine(records_url)
    with old.begin() as connection:
        connection.execute(text(OLD_TABLE))
        connection.execute(text(OLD_ROW))
    old.dispose()
    states = FileStates(tmp_path, "chroma/kb", records_url)
    assert states.load() == {"a.md": FileState(FileStamp(1, 2, "ab"), 3, "v")}
    states.put([("b.md", FileState(FileStamp(4, 5, "cd"), 6, "v", ("group:hr", "user:x")))])
    assert states.load()["b.md"].access == ("group:hr", "user:x")
    assert states.load()["a.md"].access is None
