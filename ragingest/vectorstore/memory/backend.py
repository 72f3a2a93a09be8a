"""``MemoryBackend``: the store port's ``Backend`` over collections in this process's memory.

``open_memory(persist_dir)`` is the registered factory: one backend per ``persist_dir`` for the
whole process, so an ingest and a later ``open_store`` of the same directory in one process see
the same collections. Nothing persists: the directory only names the place (this backend writes
nothing there), and every collection is gone when the process ends (the run's records, which
the run keeps in the directory, are dropped by the next run that finds its collection gone).
Any name is a collection name here, so the one ragingest gives (``names.safe_name``) is kept
as it is.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragingest.vectorstore.memory.index import MemoryIndex, Table


class MemoryBackend:
    """The collections of one in-memory place as a ``port.Backend`` (module docstring)."""

    remote = False

    def __init__(self, place: str = "memory") -> None:
        self.place = place
        self._tables: dict[str, Table] = {}
        self._lock = threading.RLock()

    def names(self) -> set[str]:
        with self._lock:
            return set(self._tables)

    def metadata(self, name: str) -> dict[str, Any] | None:
        with self._lock:
            table = self._tables.get(name)
        return None if table is None else MemoryIndex(table).metadata()

    def create(self, name: str, metadata: Mapping[str, Any]) -> MemoryIndex:
        with self._lock:
            table = self._tables.setdefault(name, Table(name, metadata))
        return MemoryIndex(table)

    def open(self, name: str) -> MemoryIndex:
        with self._lock:
            table = self._tables.get(name)
        if table is None:
            raise KeyError(f"no collection {name!r} in the memory store {self.place}")
        return MemoryIndex(table)

    def rename(self, old: str, new: str) -> None:
        with self._lock:
            if new in self._tables:
                raise ValueError(f"can't rename {old!r}: collection {new!r} exists")
            if old not in self._tables:
                raise KeyError(f"no collection {old!r} in the memory store {self.place}")
            table = self._tables.pop(old)
            with table.lock:
                table.name = new
            self._tables[new] = table

    def drop(self, name: str) -> None:
        with self._lock:
            self._tables.pop(name, None)


_PLACES: dict[str, MemoryBackend] = {}
_PLACES_LOCK = threading.Lock()


def open_memory(persist_dir: str | Path | None, server: Any = None) -> MemoryBackend:
    """The process-wide in-memory backend of ``persist_dir`` (None: one shared place), the same
    object on every call with the same directory. Nothing persists (module docstring); a
    ``server`` is refused: memory is only ever this process's."""
    if server is not None:
        raise ValueError(
            "the memory backend keeps collections in this process and takes no server: "
            "drop the server, or use the chroma backend"
        )
    place = str(Path(persist_dir).resolve()) if persist_dir is not None else "memory"
    with _PLACES_LOCK:
        return _PLACES.setdefault(place, MemoryBackend(place))
