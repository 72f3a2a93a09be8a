"""A records database made before the file states held readers gets the column on first use,
and its rows read back with no readers (no policy)."""

from __future__ import annotations

import sqlite3

from ragingest.pipeline.state import FileStamp, FileState, FileStates
from ragingest.vectorstore.records import RECORDS_FILE


def test_an_earlier_file_state_table_gets_the_access_column(tmp_path):
    with sqlite3.connect(tmp_path / RECORDS_FILE) as db:
        db.execute(
            "CREATE TABLE ragingest_file_state (namespace TEXT NOT NULL, source TEXT NOT NULL, "
            "size BIGINT NOT NULL, mtime_ns BIGINT NOT NULL, sha256 TEXT NOT NULL, chunks "
            "INTEGER NOT NULL, version TEXT NOT NULL, updated_at FLOAT NOT NULL, "
            "PRIMARY KEY (namespace, source))"
        )
        db.execute("INSERT INTO ragingest_file_state VALUES ('chroma/kb', 'a.md', 1, 2, 'ab', 3, "
                   "'v', 0.0)")  # fmt: skip
    states = FileStates(tmp_path, "chroma/kb")
    assert states.load() == {"a.md": FileState(FileStamp(1, 2, "ab"), 3, "v")}
    states.put([("b.md", FileState(FileStamp(4, 5, "cd"), 6, "v", ("group:hr", "user:x")))])
    assert states.load()["b.md"].access == ("group:hr", "user:x")
    assert states.load()["a.md"].access is None
