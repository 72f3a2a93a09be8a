"""What each ingested file looked like when its chunks went in: size, mtime and sha256 of its
bytes, in ``ragingest_file_state`` beside the record manager (one namespace per physical
collection). A file whose size, mtime and hash all match is not parsed again.

The stat and the hash are taken *before* the file is parsed: if it changes while being parsed,
the stored state is older than the chunks and the next run parses it again (never the other
way round). A row is written only after the file's chunks are in Chroma and the record
manager and its stale chunks are gone, so a killed run leaves no row claiming work it did not
finish.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import ragingest
from ragingest.vectorstore.records import connect, ensure_schema

_SCHEMA = """
CREATE TABLE IF NOT EXISTS ragingest_file_state (
    namespace TEXT NOT NULL, source TEXT NOT NULL,
    size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, sha256 TEXT NOT NULL,
    chunks INTEGER NOT NULL, version TEXT NOT NULL, updated_at REAL NOT NULL,
    PRIMARY KEY (namespace, source))
"""


def _code_version() -> str:
    """ragingest's version + a hash of its source: chunks depend on the code, so after any
    change of it (an upgrade, a local edit) every file is parsed once more. The record manager
    still skips the chunks that came out the same, and their vectors come from the cache."""
    package = Path(ragingest.__file__).parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode())
        digest.update(path.read_bytes())
    return f"{ragingest.__version__}+{digest.hexdigest()[:12]}"


VERSION = _code_version()


@dataclass(frozen=True)
class FileStamp:
    size: int
    mtime_ns: int
    sha256: str

    @classmethod
    def of(cls, path: Path) -> FileStamp:
        """Stat first, then hash: a change during hashing shows at the next run."""
        stat = os.stat(path)
        with path.open("rb") as handle:
            digest = hashlib.file_digest(handle, "sha256").hexdigest()
        return cls(stat.st_size, stat.st_mtime_ns, digest)


@dataclass(frozen=True)
class FileState:
    stamp: FileStamp
    chunks: int
    version: str = VERSION


class FileStates:
    """The state rows of one namespace (one physical collection)."""

    def __init__(self, persist_dir: str | Path, namespace: str) -> None:
        self.path = ensure_schema(persist_dir)
        self.namespace = namespace
        connection = connect(self.path)
        try:
            connection.execute(_SCHEMA)
        finally:
            connection.close()

    def load(self) -> dict[str, FileState]:
        connection = connect(self.path)
        try:
            rows = connection.execute(
                "SELECT source, size, mtime_ns, sha256, chunks, version "
                "FROM ragingest_file_state WHERE namespace = ?",
                (self.namespace,),
            ).fetchall()
        finally:
            connection.close()
        return {
            row[0]: FileState(FileStamp(row[1], row[2], row[3]), row[4], row[5]) for row in rows
        }

    def put(self, states: Iterable[tuple[str, FileState]]) -> None:
        """Write rows in one transaction."""
        rows = [
            (
                self.namespace,
                source,
                state.stamp.size,
                state.stamp.mtime_ns,
                state.stamp.sha256,
                state.chunks,
                state.version,
                time.time(),
            )
            for source, state in states
        ]
        if rows:
            self._write(
                "INSERT OR REPLACE INTO ragingest_file_state (namespace, source, size, mtime_ns,"
                " sha256, chunks, version, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )

    def delete(self, sources: Iterable[str]) -> None:
        rows = [(self.namespace, source) for source in sources]
        if rows:
            self._write("DELETE FROM ragingest_file_state WHERE namespace = ? AND source = ?", rows)

    def drop(self) -> None:
        self._write("DELETE FROM ragingest_file_state WHERE namespace = ?", [(self.namespace,)])

    def _write(self, sql: str, rows: list[tuple]) -> None:
        connection = connect(self.path)
        try:
            connection.execute("BEGIN IMMEDIATE")
            connection.executemany(sql, rows)
            connection.execute("COMMIT")
        finally:
            connection.close()


def namespaces(persist_dir: str | Path) -> list[str]:
    FileStates(persist_dir, "")  # the table exists
    connection = connect(ensure_schema(persist_dir))
    try:
        rows = connection.execute("SELECT DISTINCT namespace FROM ragingest_file_state")
        return sorted(row[0] for row in rows)
    finally:
        connection.close()
