"""Store faults and interrupts as one line each, with what to do, and the exit code that says
what happened (``cli.main`` turns any exception into ``Fault`` here).

The exit codes are ``ragingest.errors.EXIT_*``.

A damaged store (its kind's ``port.StoreFiles``: Chroma's database) is set aside by
``set_aside`` (renamed, never deleted) when the user asks for ``--rebuild``: the next ingest
refills the index from the files. When SQLite finds another file of the directory damaged and
the store's whole (``damaged_files``), the fault names that file, and ``--rebuild`` sets it
aside with the store's. ``kind`` is the store's backend (``backends.active_kind``).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ragingest.errors import (
    EXIT_CORRUPT,
    EXIT_DISK_FULL,
    EXIT_INTERRUPTED,
    EXIT_READ_ONLY,
    EXIT_TERMINATED,
    error_chain,
)
from ragingest.vectorstore.backends import store_files
from ragingest.vectorstore.disk import free_mb, store_writable

if TYPE_CHECKING:
    from ragingest.pipeline.report import RunReport
    from ragingest.vectorstore.port import StoreFiles

INTERRUPTED = "interrupted; the next run finishes the work"

_READ_ONLY = ("readonly database", "read-only file system", "attempt to write a read")
_CORRUPT = (
    "database disk image is malformed",
    "file is not a database",
    "file is encrypted or is not a database",
    "malformed database schema",
    "error in compaction",  # Chroma could not apply a write to its segments
    "failed to apply logs to the metadata segment",
)
_DISK_FULL = ("database or disk is full", "no space left on device", "disk is full")


class Terminated(KeyboardInterrupt):
    """SIGTERM (systemd's stop, ``kill``): unwinds the run like Ctrl-C does."""


def interrupted(exc: BaseException) -> int:
    """Say in one line that the run was stopped; its exit code (143 for SIGTERM, else 130).
    What was written stays, embeddings computed included (the cache is written per batch)."""
    message = INTERRUPTED.replace("interrupted", "terminated", 1)
    print(f"ragingest: {message if isinstance(exc, Terminated) else INTERRUPTED}", file=sys.stderr)
    return EXIT_TERMINATED if isinstance(exc, Terminated) else EXIT_INTERRUPTED


@dataclass(frozen=True)
class Fault:
    """A storage fault in words: its kind, the one-line message saying what to do, the exit
    status."""
    kind: str  # "read_only" | "corrupt" | "disk_full"
    message: str  # one line: what happened and what to do
    exit_code: int


def _texts(exc: BaseException) -> list[str]:
    texts = []
    for item in error_chain(exc):
        texts.append(str(item).lower())
        original = getattr(item, "orig", None)  # SQLAlchemy wraps the driver's error
        if original is not None:
            texts.append(str(original).lower())
    return texts


def _errnos(exc: BaseException) -> set[int]:
    return {e.errno for e in error_chain(exc) if isinstance(e, OSError) and e.errno is not None}


def classify(
    exc: BaseException, persist_dir: Path | None = None, kind: str | None = None
) -> Fault | None:
    """The store fault ``exc`` is (walking its causes), or None when it is none of them."""
    texts, numbers = _texts(exc), _errnos(exc)
    where = str(persist_dir) if persist_dir is not None else "the persist directory"
    if (
        errno.ENOSPC in numbers
        or errno.EDQUOT in numbers
        or any(marker in text for text in texts for marker in _DISK_FULL)
    ):
        return _disk_full(where, persist_dir)
    if any(marker in text for text in texts for marker in _CORRUPT):
        files = store_files(kind)
        label = files.label if files is not None else "store"
        others = _damaged_beside_store(persist_dir, files)
        if others:
            return Fault(
                "corrupt",
                f"{', '.join(f'{where}/{name}' for name in others)} is damaged "
                f"({_first(texts, _CORRUPT)}); run the same ingest with --rebuild: it sets it "
                f"aside with the {label} it goes with and rebuilds the index from your "
                "files (the embedding cache spares the model most of the work)",
                EXIT_CORRUPT,
            )
        return Fault(
            "corrupt",
            f"the {label} {where}{f'/{files.main_file}' if files else ''} is damaged "
            f"({_first(texts, _CORRUPT)}); "
            "run the same ingest with --rebuild: it sets the damaged files aside and rebuilds "
            "the index from your files",
            EXIT_CORRUPT,
        )
    read_only = errno.EROFS in numbers or any(m in t for t in texts for m in _READ_ONLY)
    denied = bool(numbers & {errno.EACCES, errno.EPERM})
    if read_only or (denied and persist_dir is not None and not store_writable(persist_dir)):
        return Fault(
            "read_only",
            f"the store {where} is read-only; ingest must write there (make it writable or "
            "pass another --persist-dir); query and status only read it",
            EXIT_READ_ONLY,
        )
    if "disk i/o error" in " ".join(texts) and persist_dir is not None:
        free = free_mb(persist_dir)
        if free is not None and free < 64:
            return _disk_full(where, persist_dir)
    return None


def _disk_full(where: str, persist_dir: Path | None) -> Fault:
    free = free_mb(persist_dir) if persist_dir is not None else None
    left = f" ({free:.1f} MB free)" if free is not None else ""
    return Fault(
        "disk_full",
        f"the disk of {where} is full{left}; free some space and run again: the next run "
        "finishes the work (nothing half-written is kept)",
        EXIT_DISK_FULL,
    )


def _first(texts: list[str], markers: tuple[str, ...]) -> str:
    return next(m for t in texts for m in markers if m in t)


def damaged_files(persist_dir: Path) -> list[str]:
    """The SQLite files of ``persist_dir`` that SQLite's ``quick_check`` finds damaged (opened
    read-only; one it cannot open now, busy or locked, is not counted)."""
    found = []
    for path in sorted(persist_dir.glob("*.sqlite*")):
        if path.suffix not in (".sqlite", ".sqlite3"):
            continue
        uri = f"{path.absolute().as_uri()}?mode=ro"
        try:
            with contextlib.closing(sqlite3.connect(uri, uri=True, timeout=5)) as db:
                whole = db.execute("PRAGMA quick_check").fetchone()[0] == "ok"
        except sqlite3.OperationalError:
            continue
        except sqlite3.DatabaseError:
            whole = False
        if not whole:
            found.append(path.name)
    return found


def _damaged_beside_store(persist_dir: Path | None, files: StoreFiles | None) -> list[str]:
    """The damaged files of ``persist_dir`` when the store's own is not one of them."""
    found = damaged_files(persist_dir) if persist_dir is not None else []
    return [] if files is not None and files.main_file in found else found


def report_fault(
    exc: BaseException,
    persist_dir: Path | None,
    report: str | None,
    partial: RunReport | None = None,
    kind: str | None = None,
) -> int | None:
    """Say what ``exc`` is, in one line on stderr, and return its exit code; None when it is
    no store fault. With ``report`` (the ``--report`` file) the run's ``partial`` report
    (``pipeline.report.RunReport``, as far as the run got) is written there with the fault as its
    error, or the line says why it could not be."""
    import sys

    fault = classify(exc, persist_dir, kind)
    if fault is None:
        return None
    line = f"ragingest: {fault.message}"
    if report:
        if partial is None:
            from ragingest.pipeline.report import RunReport

            partial = RunReport()
        partial.error = fault.message
        try:
            partial.write(report)
        except OSError as write_error:
            line += f" (the report {report} could not be written: {write_error.strerror})"
    print(line, file=sys.stderr)
    return fault.exit_code


def recover_damaged(
    exc: BaseException, persist_dir: Path, rebuild: bool, kind: str | None = None
) -> bool:
    """With ``rebuild``, set the damaged store aside (``port.StoreFiles.set_aside``), with any
    file of ragingest's own that SQLite finds damaged beside it (True: run again)."""
    fault = classify(exc, persist_dir, kind)
    if not rebuild or fault is None or fault.kind != "corrupt":
        return False
    import logging

    # ragingest's own files go with the store's: what they held of the index (records, parent
    # sections, terms) is rebuilt with it, from the files, as a whole
    files = store_files(kind)
    others = _damaged_beside_store(persist_dir, files)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
    moved = [
        part.rename(part.with_name(f"{name}.damaged-{stamp}{suffix}"))
        for name in others
        for suffix in ("", "-wal", "-shm")
        if (part := persist_dir / f"{name}{suffix}").exists()
    ]
    moved += files.set_aside(persist_dir, stamp) if files is not None else []
    logging.getLogger(__name__).warning(
        "the %s was damaged: set aside as %s; rebuilding the index",
        ", ".join(others) if others else files.label if files is not None else "store",
        ", ".join(p.name for p in moved) or "nothing",
    )
    return bool(moved)
