"""One sqlite3 connection per thread to one SQLite file: a connection can't be shared between
threads (sqlite3's check) nor carried across a fork, and opening one per call costs more than
the reads it serves (the lexical search, the parents' lookups of every query).

Contract: ``ThreadLocalConnection(path).get()`` returns this thread's connection to ``path``,
opened on first use and opened again when the file was replaced (another inode: a rebuild's
swap) or the process forked; ``close()`` closes this thread's.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path


class ThreadLocalConnection:
    """This thread's connection to ``path`` (module docstring); ``wal``: the file in
    write-ahead-log mode; ``autocommit``: no implicit transactions (``isolation_level=None``)."""

    def __init__(self, path: str | Path, *, wal: bool = False, autocommit: bool = False) -> None:
        self.path = Path(path)
        self.wal, self.autocommit = wal, autocommit
        self._local = threading.local()

    def get(self) -> sqlite3.Connection:
        """This thread's connection (module docstring)."""
        local = self._local
        db = getattr(local, "db", None)
        identity = self._identity()
        if db is None or local.identity != identity:
            if db is not None and local.identity[0] == os.getpid():
                db.close()
            if self.autocommit:
                db = sqlite3.connect(str(self.path), timeout=60, isolation_level=None)
            else:
                db = sqlite3.connect(str(self.path), timeout=60)
            if self.wal:
                db.execute("PRAGMA journal_mode=WAL")
            local.db, local.identity = db, self._identity()
        return db

    def close(self) -> None:
        """Close this thread's connection (the next ``get`` opens another)."""
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None

    def _identity(self) -> tuple[int, int]:
        try:
            return os.getpid(), os.stat(self.path).st_ino
        except FileNotFoundError:
            return os.getpid(), -1
