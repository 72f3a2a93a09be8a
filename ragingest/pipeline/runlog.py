"""The run log: one JSON line per ``ingest`` run, appended to ``ragingest_runs.jsonl`` in the
Chroma directory (or ``--run-log FILE``), for cron/systemd/watch runs to be checked later.

Each line: ``started``, ``finished`` (ISO 8601, UTC), ``seconds``, ``collection``,
``physical`` (the Chroma collection written), ``status`` ("ok" | "failed_files" | "error"),
``error``, ``files_seen``, ``files_changed`` (parsed: new or modified), ``files_unchanged``,
``files_failed``, ``files_deleted`` (gone from the roots), ``chunks_added``,
``chunks_skipped``, ``chunks_deleted``, ``chunks_updated``, ``embeddings_computed``,
``embeddings_cached``, ``rebuilt``, ``pid``. A run killed with ``kill -9`` writes no line.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

RUN_LOG = "ragingest_runs.jsonl"


def run_log_path(persist_dir: str | Path, override: str | Path | None = None) -> Path:
    return Path(override) if override else Path(persist_dir) / RUN_LOG


def append(path: str | Path, record: dict[str, Any]) -> None:
    """One line, one ``write`` on an ``O_APPEND`` file: lines of concurrent runs never mix."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    line = (json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def read(path: str | Path, collection: str | None = None) -> list[dict[str, Any]]:
    """Every record (of ``collection``), oldest first; unreadable lines are skipped."""
    path = Path(path)
    if not path.is_file():
        return []
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if collection is None or record.get("collection") == collection:
            records.append(record)
    return records


def last_run(path: str | Path, collection: str, block: int = 1 << 16) -> dict[str, Any] | None:
    """The newest record of ``collection``, reading the file from its end."""
    path = Path(path)
    if not path.is_file():
        return None
    with path.open("rb") as handle:
        handle.seek(0, os.SEEK_END)
        end = handle.tell()
        tail = b""
        while end > 0:
            start = max(0, end - block)
            handle.seek(start)
            tail = handle.read(end - start) + tail
            end = start
            lines = tail.split(b"\n")
            complete = lines if start == 0 else lines[1:]
            for line in reversed(complete):
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if record.get("collection") == collection:
                    return record
            tail = lines[0] if start else b""
    return None
