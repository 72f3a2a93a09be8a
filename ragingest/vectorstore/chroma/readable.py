"""Reading a store that can't be written: a read-only mount, a folder without write permission,
or a full disk. Chroma's embedded client writes to ``chroma.sqlite3`` as it opens it (a row of
its writer lock, through a rollback journal; chromadb has no read-only client), so a reader of
such a store (``query``, ``status``, ``HeadingFirstRetriever``) reads a temporary copy of it
instead, made in the system's temporary folder (``$TMPDIR``); when that disk is full too the
copy fails with ``ENOSPC`` and the reader says the disk is full.

Contract: ``readable_copy(persist_dir)`` is None when ``persist_dir`` can be read in place (it
is writable with room to spare, or it is missing: the caller refuses it); else a
``TemporaryDirectory`` holding the copy at ``store_path(copy)``, removed by its ``cleanup`` or
when it is garbage-collected. The copy is a snapshot: writes made to the store afterwards are
not seen through it.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ragingest.vectorstore.disk import free_mb, store_writable

log = logging.getLogger(__name__)

_NOT_COPIED = ("ragingest_embeddings.sqlite", "*.lock", "*.damaged-*")  # not needed to read
# Room Chroma's open needs (a journal of a page or two); below it a disk counts as full.
ROOM_MB = 1.0


def _why_copied(persist_dir: Path) -> str | None:
    if not store_writable(persist_dir):
        return "read-only"
    free = free_mb(persist_dir)
    if free is not None and free < ROOM_MB:
        return f"on a full disk ({free:.1f} MB free)"
    return None


def store_path(copy: tempfile.TemporaryDirectory[str]) -> Path:
    """The copied store inside ``copy`` (``readable_copy``'s value)."""
    return Path(copy.name) / "store"


def readable_copy(persist_dir: str | Path | None) -> tempfile.TemporaryDirectory[str] | None:
    """A temporary copy of a store that can't be opened in place (module docstring), else
    None."""
    if persist_dir is None:
        return None
    persist_dir = Path(persist_dir)
    why = _why_copied(persist_dir) if persist_dir.is_dir() else None
    if why is None:
        return None
    log.info("%s is %s: reading a temporary copy of it", persist_dir, why)
    scratch = tempfile.TemporaryDirectory(prefix="ragingest-readonly-")
    try:
        copy = store_path(scratch)
        shutil.copytree(
            persist_dir, copy, ignore=shutil.ignore_patterns(*_NOT_COPIED),
            copy_function=shutil.copy,
        )  # fmt: skip
        for path in (copy, *copy.rglob("*")):  # the copies keep the source's modes
            path.chmod(0o700 if path.is_dir() else 0o600)
    except BaseException:
        scratch.cleanup()
        raise
    return scratch


@contextlib.contextmanager
def readable_store(persist_dir: str | Path | None) -> Iterator[Path | None]:
    """``persist_dir`` itself when it can be read in place (or missing: the caller says so;
    None: the servers hold everything), else a temporary copy of it, removed afterwards."""
    copy = readable_copy(persist_dir)
    if copy is None:
        yield None if persist_dir is None else Path(persist_dir)
        return
    with copy:
        yield store_path(copy)
