"""One writer per collection: an exclusive ``flock`` on ``ragingest_<name>.lock`` in the Chroma
directory.

The kernel drops the lock when its holder dies, ``kill -9`` included, so a crashed run never
leaves a stale lock behind. The holder writes its pid and start time into the file for the
message a second run prints (and for ``ragingest status``). ``flock`` is local: on a network
filesystem, keep runs on one machine.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import logging
import os
import socket
from pathlib import Path
from typing import Any

from ragingest.errors import LockedError

log = logging.getLogger(__name__)


def lock_path(persist_dir: str | Path, collection: str) -> Path:
    return Path(persist_dir) / f"ragingest_{collection}.lock"


def _describe(holder: dict[str, Any] | None) -> str:
    if not holder:
        return "another ragingest run"
    return f"another ragingest run (pid {holder.get('pid')}, since {holder.get('started')})"


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = path.read_text(encoding="utf-8").strip()
        return json.loads(data) if data else None
    except (OSError, ValueError):
        return None


def lock_holder(persist_dir: str | Path, collection: str) -> dict[str, Any] | None:
    """The run writing ``collection`` now (pid, host, started), or None. Never takes the
    lock itself, so asking can't make a starting writer fail."""
    holder = _read(lock_path(persist_dir, collection))
    if not holder:
        return None
    if holder.get("host") == socket.gethostname():
        try:
            os.kill(int(holder["pid"]), 0)
        except (ProcessLookupError, ValueError, KeyError):
            return None  # left by a run that was killed
        except PermissionError:
            pass
    return holder


class CollectionLock:
    """``with CollectionLock(dir, name):`` — raises ``LockedError`` at once when another run
    holds it, or waits for it with ``wait=True``."""

    def __init__(self, persist_dir: str | Path, collection: str, wait: bool = False) -> None:
        self.path = lock_path(persist_dir, collection)
        self.collection = collection
        self.wait = wait
        self._fd: int | None = None

    def __enter__(self) -> CollectionLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _describe(_read(self.path))
                if not self.wait:
                    raise LockedError(
                        f"collection {self.collection!r} in {self.path.parent} is being written "
                        f"by {holder}; not starting a second writer. Re-run with --wait to "
                        "wait for it"
                    ) from None
                log.warning(
                    "waiting for %s to finish writing collection %r", holder, self.collection
                )
                fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        info = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(info).encode(), 0)
        log.info("locked collection %r for writing (pid %d)", self.collection, os.getpid())
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd is None:
            return
        try:
            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        finally:
            os.close(self._fd)
            self._fd = None
