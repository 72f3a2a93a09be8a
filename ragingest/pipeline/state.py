"""What each ingested file looked like when its chunks went in: size, mtime and sha256 of its
bytes, in ``ragingest_file_state`` of the records database (beside the record manager, one
namespace per physical collection; ``ragingest.vectorstore.records.database``: SQLite in the Chroma
directory by default, or a ``--records-url``). A file whose size, mtime and hash all match is
not parsed again.

The stat and the hash are taken *before* the file is parsed: if it changes while being parsed,
the stored state is older than the chunks and the next run parses it again (never the other
way round). A row is written only after the file's chunks are in Chroma and the record
manager and its stale chunks are gone, so a killed run leaves no row claiming work it did not
finish.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from pathlib import Path

from sqlalchemy import delete, select

from ragingest.pipeline.stamps import FileStamp, FileState
from ragingest.vectorstore.records.database import (
    FILE_STATE,
    ensure_schema,
    records_engine,
    upsert,
)

_CHUNK = 500  # sources per IN (...) list

__all__ = ["FileStamp", "FileState", "FileStates", "namespaces"]  # the stamps, re-exported


class FileStates:
    """The state rows of one namespace (one physical collection)."""

    def __init__(
        self, persist_dir: str | Path | None, namespace: str, records_url: str | None = None
    ) -> None:
        self.engine = ensure_schema(records_engine(persist_dir, records_url))
        self.namespace = namespace

    def load(self) -> dict[str, FileState]:
        """The recorded state of each source of this namespace (``source`` → ``FileState``)."""
        t = FILE_STATE.c
        with self.engine.connect() as connection:
            rows = connection.execute(
                select(
                    t.source, t.size, t.mtime_ns, t.sha256, t.chunks, t.version, t.access
                ).where(t.namespace == self.namespace)
            ).all()
        return {
            row[0]: FileState(
                FileStamp(row[1], row[2], row[3]), row[4], row[5], _access(row[6])
            )
            for row in rows
        }

    def put(self, states: Iterable[tuple[str, FileState]]) -> None:
        """Write rows in one transaction."""
        now = time.time()
        rows = [
            {
                "namespace": self.namespace,
                "source": source,
                "size": state.stamp.size,
                "mtime_ns": state.stamp.mtime_ns,
                "sha256": state.stamp.sha256,
                "chunks": state.chunks,
                "version": state.version,
                "access": None if state.access is None else json.dumps(list(state.access)),
                "updated_at": now,
            }
            for source, state in states
        ]
        if rows:
            with self.engine.begin() as connection:
                upsert(connection, FILE_STATE, rows)

    def delete(self, sources: Iterable[str]) -> None:
        """Delete rows in one transaction."""
        sources = list(sources)
        if not sources:
            return
        with self.engine.begin() as connection:
            for i in range(0, len(sources), _CHUNK):
                connection.execute(
                    delete(FILE_STATE)
                    .where(FILE_STATE.c.namespace == self.namespace)
                    .where(FILE_STATE.c.source.in_(sources[i : i + _CHUNK]))
                )

    def drop(self) -> None:
        """Forget every file state of this namespace."""
        with self.engine.begin() as connection:
            connection.execute(delete(FILE_STATE).where(FILE_STATE.c.namespace == self.namespace))


def _access(stored: str | None) -> tuple[str, ...] | None:
    """A state row's readers as recorded (JSON list), None when no policy wrote it."""
    return None if stored is None else tuple(json.loads(stored))


def namespaces(persist_dir: str | Path, records_url: str | None = None) -> list[str]:
    """The namespaces with recorded file states, sorted."""
    engine = ensure_schema(records_engine(persist_dir, records_url))
    with engine.connect() as connection:
        rows = connection.execute(select(FILE_STATE.c.namespace).distinct())
        return sorted(row[0] for row in rows)
