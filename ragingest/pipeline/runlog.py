"""The run log: one JSON line per ``ingest`` run, appended to ``ragingest_runs.jsonl`` in the
Chroma directory (or ``--run-log FILE``), for cron/systemd/watch runs to be checked later.

Each line: ``started``, ``finished`` (ISO 8601, UTC), ``seconds``, ``collection``,
``physical`` (the Chroma collection written), ``status`` ("ok" | "failed_files" |
"refused" | "error"), ``error``, ``files_seen``, ``files_changed`` (parsed: new or modified),
``files_unchanged``, ``files_failed``, ``files_deleted`` (gone from the roots), ``chunks_added``,
``chunks_skipped``, ``chunks_deleted``, ``chunks_updated``, ``embeddings_computed``,
``embeddings_cached``, ``rebuilt``, ``pid``, and ``failures``: ``{"source", "kind",
"error"}`` of each file that failed in this run (at most ``MAX_FAILURES``; a file not tried
again because it failed before is in the line of the run that failed it). A run killed with
``kill -9`` writes no line.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragingest.pipeline.checks import FAILED_BEFORE

if TYPE_CHECKING:
    from ragingest.pipeline.options import IngestOptions
    from ragingest.pipeline.report import RunReport

log = logging.getLogger(__name__)
ACCESS_SOURCES_LOGGED = 1000  # sources whose readers changed, named in a run's line (then counted)

RUN_LOG = "ragingest_runs.jsonl"
MAX_FAILURES = 100  # failed files listed in one line (``files_failed`` counts them all)


def run_log_path(persist_dir: str | Path, override: str | Path | None = None) -> Path:
    return Path(override) if override else Path(persist_dir) / RUN_LOG


def append(path: str | Path, record: Mapping[str, object]) -> None:
    """One line, one ``write`` on an ``O_APPEND`` file: lines of concurrent runs never mix.
    The folder must exist (the persist dir, or ``--run-log``'s, checked before the run)."""
    path = Path(path)
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


def now() -> str:
    """This moment in UTC, ISO 8601 to the millisecond (the run log's times)."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")


def failures(report: RunReport) -> list[dict[str, str]]:
    """The files that failed in the run of ``report`` (not those only failed before)."""
    failed = (f for f in report.files if f.status == "failed" and f.error != FAILED_BEFORE)
    listed = [{"source": f.path, "kind": f.kind, "error": f.error} for f in failed]
    return listed[:MAX_FAILURES]


def log_run(options: IngestOptions, report: RunReport, started: str) -> None:
    """Append the line of the run ``report`` describes (begun at ``started``) to the run log
    of ``options``; a log that cannot be written is a warning, never a failed run. Beside the
    module docstring's keys, an audit of permission changes: ``access_policy`` (where the
    run's policy came from, "" without one), ``access_changed`` (files whose readers were
    rewritten) and ``access_changed_sources`` (the first ``ACCESS_SOURCES_LOGGED`` of them)."""
    status = "refused" if report.refused else "error" if report.error else None
    status = status or ("failed_files" if report.failed else "ok")
    record = {
        "started": started,
        "finished": now(),
        "seconds": round(report.seconds, 3),
        "collection": options.collection,
        "physical": report.collection,
        "persist_dir": str(options.persist_dir),
        "status": status,
        "error": report.error,
        "access_policy": report.access_policy,
        "access_changed": len(report.access_changed),
        "access_changed_sources": report.access_changed[:ACCESS_SOURCES_LOGGED],
        "files_seen": len(report.files),
        "files_changed": report.changed,
        "files_unchanged": report.unchanged,
        "files_failed": report.failed,
        "files_deleted": report.files_deleted,
        "chunks_added": report.added,
        "chunks_skipped": report.skipped,
        "chunks_deleted": report.deleted,
        "chunks_updated": report.updated,
        "embeddings_computed": report.embeddings_computed,
        "embeddings_cached": report.embeddings_cached,
        "rebuilt": report.rebuilt,
        "pid": os.getpid(),
        "failures": failures(report),
    }
    try:
        target = run_log_path(options.persist_dir, options.run_log)
        if os.path.abspath(target.parent) == os.path.abspath(options.persist_dir):
            target.parent.mkdir(parents=True, exist_ok=True)  # the run's; no other folder
        append(target, record)
    except OSError as exc:
        log.warning("could not write the run log: %s", exc)
