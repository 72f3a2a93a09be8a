"""The disk a store's files are on: its free room and whether it can be written (the read-only
copy of a store and the command line's faults ask; no store is opened)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def free_mb(path: Path) -> float | None:
    """Free MiB on the disk holding ``path`` (or its nearest existing parent); ``None`` when it
    cannot be read."""
    for candidate in (path, *path.parents):
        if candidate.exists():
            try:
                return shutil.disk_usage(candidate).free / 2**20
            except OSError:
                return None
    return None


def store_writable(path: Path) -> bool:
    """False when ``path`` (or the folder it would be made in) can't be written."""
    existing = next((p for p in (path, *path.parents) if p.exists()), None)
    if existing is None:
        return True
    try:
        if os.statvfs(existing).f_flag & os.ST_RDONLY:
            return False
    except OSError:
        pass
    return os.access(existing, os.W_OK)
