"""Which store a collection lives in: the registry of ``port.Backend`` factories.

A backend is registered by one entry naming its factory, ``"module:function"``, called as
``factory(persist_dir, server)`` and returning a ``port.Backend``: the built-in ones in
``BUILT_IN``, a third party's in the ``ragingest.backends`` entry point group of its installed
package (``[project.entry-points."ragingest.backends"] mystore = "mypkg.store:open_store"``).
Only installed packages are looked at: nothing in an ingested folder names a backend.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from ragingest.vectorstore.port import Backend

DEFAULT = "chroma"
ENTRY_POINTS = "ragingest.backends"
BUILT_IN = {
    "chroma": "ragingest.vectorstore.chroma.backend:open_chroma",
    "memory": "ragingest.vectorstore.memory.backend:open_memory",
}

Factory = Callable[[str | Path | None, Any], Backend]


def backend_names() -> list[str]:
    """Every backend that can be named: the built-in ones, then the installed ones."""
    installed = [e.name for e in entry_points(group=ENTRY_POINTS) if e.name not in BUILT_IN]
    return [*BUILT_IN, *sorted(installed)]


def backend_factory(kind: str) -> Factory:
    """The factory registered as ``kind`` (``ValueError`` listing the known ones)."""
    target = BUILT_IN.get(kind)
    if target is None:
        found = [e for e in entry_points(group=ENTRY_POINTS) if e.name == kind]
        if not found:
            known = ", ".join(backend_names())
            raise ValueError(f"no store backend {kind!r}: known backends are {known}")
        target = found[0].value
    module, _, attribute = target.partition(":")
    factory: Factory = getattr(importlib.import_module(module), attribute)
    return factory


def open_backend(
    persist_dir: str | Path | None, server: Any = None, kind: str | None = None
) -> Backend:
    """The ``kind`` backend (default ``DEFAULT``) of ``persist_dir`` / ``server``."""
    return backend_factory(kind or DEFAULT)(persist_dir, server)
