"""``ragingest watch``: re-run ``ingest`` whenever the watched files change.

Every ``interval`` the watched roots are walked (the same walk as ``ingest``) and each file's
size and mtime compared with the snapshot taken just before the last run; any difference
(a file new, changed or gone) starts a run. A snapshot is taken *before* each run, so a change
made during a run starts another one. A run that finds the collection locked by another writer
is retried at the next check. Stopping the watcher at any moment, ``kill -9`` included, is safe:
the next run finishes the interrupted one.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from ragingest.errors import LockedError
from ragingest.loaders import walk
from ragingest.pipeline.report import RunReport
from ragingest.pipeline.runner import IngestOptions, ingest

log = logging.getLogger(__name__)

_INTERVAL = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s|m|h|d)?\s*$")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_interval(text: str) -> float:
    """``"10m"`` → 600.0 seconds; units ms, s (default), m, h, d."""
    match = _INTERVAL.match(text)
    if not match or float(match.group(1)) <= 0:
        raise ValueError(f"bad interval {text!r}: use e.g. 30s, 10m, 1h")
    return float(match.group(1)) * _UNITS[match.group(2) or "s"]


Snapshot = dict[str, tuple[int, int]]


def snapshot(
    paths: Sequence[str | Path],
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    follow_outside: bool = False,
) -> Snapshot:
    """Size and mtime of every file ``ingest`` would see (``follow_outside``: with the
    targets of symlinks out of the roots, as ``--follow-symlinks-outside``)."""
    state: Snapshot = {}
    walked = walk(paths, include, exclude, follow_outside, skipped=[])  # the run names them
    for found in walked:
        try:
            stat = found.path.stat()
            state[str(found.path)] = (stat.st_size, stat.st_mtime_ns)
        except OSError:
            state[str(found.path)] = (-1, -1)
    return state


def watch(
    paths: Sequence[str | Path],
    options: IngestOptions,
    interval: float,
    max_runs: int | None = None,
    on_report: Callable[[RunReport], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    """Run ``ingest`` now and after every change; return the last run's exit code once
    ``max_runs`` runs are done (never, without it)."""
    runs, code = 0, 0
    last: Snapshot | None = None
    while True:
        current = snapshot(paths, options.include, options.exclude, options.follow_symlinks_outside)
        if current != last:
            try:
                report = ingest(paths, options)
            except LockedError as exc:
                log.warning("%s; trying again at the next check", exc)
            else:
                last, runs, code = current, runs + 1, report.exit_code
                if on_report:
                    on_report(report)
                if max_runs and runs >= max_runs:
                    return code
        sleep(interval)
