"""Reading a store that can't be written (a read-only mount, a folder without write
permission): Chroma's embedded client writes to ``chroma.sqlite3`` as it opens it, so
``query`` and ``status`` read a temporary copy of the store instead."""

from __future__ import annotations

import contextlib
import logging
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ragingest.cli.faults import store_writable

log = logging.getLogger(__name__)

_NOT_COPIED = ("ragingest_embeddings.sqlite", "*.lock", "*.damaged-*")  # not needed to read


@contextlib.contextmanager
def readable_store(persist_dir: Path | None) -> Iterator[Path | None]:
    """``persist_dir`` itself when it is writable (or missing: the caller says so; None: the
    servers hold everything), else a temporary copy of it, removed afterwards."""
    if persist_dir is None:
        yield None
        return
    persist_dir = Path(persist_dir)
    if not persist_dir.is_dir() or store_writable(persist_dir):
        yield persist_dir
        return
    log.info("%s is read-only: reading a temporary copy of it", persist_dir)
    with tempfile.TemporaryDirectory(prefix="ragingest-readonly-") as scratch:
        copy = Path(scratch) / "store"
        shutil.copytree(
            persist_dir,
            copy,
            ignore=shutil.ignore_patterns(*_NOT_COPIED),
            copy_function=shutil.copy,
        )
        for path in (copy, *copy.rglob("*")):  # the copies keep the source's modes
            path.chmod(0o700 if path.is_dir() else 0o600)
        yield copy
