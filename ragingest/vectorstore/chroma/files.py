"""Chroma's embedded store as files in ``--persist-dir`` (``port.StoreFiles``): refusing a
directory that holds none, reading one that can't be written (``readable``), and setting a
damaged one aside. Nothing here opens the store: a damaged or read-only one is handled too."""

from __future__ import annotations

import contextlib
from pathlib import Path

from ragingest.vectorstore.chroma.readable import readable_store

MAIN_FILE = "chroma.sqlite3"


class ChromaFiles:
    """Chroma's ``port.StoreFiles`` (module docstring)."""

    main_file = MAIN_FILE
    label = "Chroma database"

    def require(self, persist_dir: str | Path) -> None:
        """``collection_info.require_store_dir``: no ``chroma.sqlite3``, no store (a server
        in use needs none)."""
        from ragingest.vectorstore.chroma.collection_info import require_store_dir

        require_store_dir(persist_dir)

    def readable(
        self, persist_dir: str | Path | None
    ) -> contextlib.AbstractContextManager[Path | None]:
        return readable_store(persist_dir)

    def set_aside(self, persist_dir: Path, stamp: str) -> list[Path]:
        """Rename ``chroma.sqlite3`` (with its WAL) and the segment folders beside it to
        ``*.damaged-<stamp>``; the records database then sees the collections gone and the
        next ingest refills them. This process's client of the path is forgotten (chromadb
        keeps one per path, a failed one too)."""
        moved = []
        for path in sorted(persist_dir.iterdir()):
            is_segment = path.is_dir() and len(path.name) == 36 and path.name.count("-") == 4
            if path.name in (MAIN_FILE, f"{MAIN_FILE}-wal", f"{MAIN_FILE}-shm") or is_segment:
                target = path.with_name(f"{path.name}.damaged-{stamp}")
                path.rename(target)
                moved.append(target)
        from ragingest.vectorstore.chroma.clients import forget_clients

        forget_clients()
        return moved
