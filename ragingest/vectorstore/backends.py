"""Which store a collection lives in: the registry of ``port.Backend`` factories.

A backend is registered by one entry naming its factory, ``"module:attribute"``, called as
``factory(persist_dir, server)`` and returning a ``port.Backend``: the built-in ones in
``BUILT_IN``, a third party's in the ``ragingest.backends`` entry point group of its installed
package (``[project.entry-points."ragingest.backends"] mystore = "mypkg.store:open_store"``).
Only installed packages are looked at: nothing in an ingested folder names a backend.

The factory may also carry what its kind offers before a backend is opened, each optional:
``server_options`` (a ``port.ServerOptions``: command-line options naming a server) and
``store_files`` (a ``port.StoreFiles``: a store kept as files in ``--persist-dir``). An open
backend's own extras are asked of it (``port.upkeep_of``). So a new backend touches its folder
and one entry, nothing else.

``use_backend(kind)`` chooses the kind for a block of code (the command line's ``--backend``),
as ``open_backend`` with no ``kind`` then opens it.
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:  # the command line reads the registry: --help imports no store
    from ragingest.vectorstore.port import Backend, ServerOptions, StoreFiles

DEFAULT = "chroma"
ENTRY_POINTS = "ragingest.backends"
BUILT_IN = {
    "chroma": "ragingest.vectorstore.chroma.kind:CHROMA",
    "memory": "ragingest.vectorstore.memory.backend:open_memory",
}

Factory = Callable[[str | Path | None, Any], "Backend"]

_ACTIVE: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "ragingest_backend", default=None
)


def backend_names() -> list[str]:
    """Every backend that can be named: the built-in ones, then the installed ones."""
    from importlib.metadata import entry_points

    installed = [e.name for e in entry_points(group=ENTRY_POINTS) if e.name not in BUILT_IN]
    return [*BUILT_IN, *sorted(installed)]


def backend_factory(kind: str) -> Factory:
    """The factory registered as ``kind`` (``ValueError`` listing the known ones)."""
    target = BUILT_IN.get(kind)
    if target is None:
        from importlib.metadata import entry_points

        found = [e for e in entry_points(group=ENTRY_POINTS) if e.name == kind]
        if not found:
            known = ", ".join(backend_names())
            raise ValueError(f"no store backend {kind!r}: known backends are {known}")
        target = found[0].value
    module, _, attribute = target.partition(":")
    factory: Factory = getattr(importlib.import_module(module), attribute)
    return factory


def active_kind(kind: str | None = None) -> str:
    """``kind``, else the one the enclosing ``use_backend`` chose, else ``DEFAULT``."""
    return kind or _ACTIVE.get() or DEFAULT


@contextlib.contextmanager
def use_backend(kind: str | None) -> Iterator[str]:
    """Within the block, ``open_backend`` without a ``kind`` opens ``kind`` (None: as
    outside the block); ``ValueError`` for a kind nobody registered."""
    chosen = active_kind(kind)
    backend_factory(chosen)
    token = _ACTIVE.set(chosen)
    try:
        yield chosen
    finally:
        _ACTIVE.reset(token)


def open_backend(
    persist_dir: str | Path | None, server: Any = None, kind: str | None = None
) -> Backend:
    """The ``kind`` backend (default: ``active_kind()``) of ``persist_dir`` / ``server``;
    ``CollectionMismatchError`` when ``persist_dir`` belongs to another kind (``claim_place``)."""
    chosen = active_kind(kind)
    claim_place(persist_dir, chosen)
    return backend_factory(chosen)(persist_dir, server)


KIND_FILE = "ragingest_backend.txt"  # the kind of a directory's side stores, when not DEFAULT


def claim_place(persist_dir: str | Path | None, kind: str) -> None:
    """Refuse ``persist_dir`` when its records, parents and lexical index belong to another
    kind's collections: a run of one kind finds the other kind's collections absent and would
    drop what is kept beside them. A directory's kind is ``KIND_FILE``'s (written here by the
    first open of a kind other than ``DEFAULT``), else ``DEFAULT`` where it holds records
    (every directory before backends existed), else none yet."""
    if persist_dir is None:
        return
    from ragingest.vectorstore.records.location import RECORDS_FILE

    folder = Path(persist_dir)
    marker = folder / KIND_FILE
    found = marker.read_text(encoding="utf-8").strip() if marker.is_file() else None
    if found is None and (folder / RECORDS_FILE).is_file():
        found = DEFAULT
    if found is not None and found != kind:
        from ragingest.errors import CollectionMismatchError

        raise CollectionMismatchError(
            f"{folder} holds the collections of the {found!r} backend, not {kind!r}: give "
            f"--backend {found}, or another --persist-dir for the {kind!r} backend"
        )
    if found is None and kind != DEFAULT:
        with contextlib.suppress(OSError):  # a read-only place stays unclaimed
            folder.mkdir(parents=True, exist_ok=True)
            marker.write_text(kind + "\n", encoding="utf-8")


def server_options(kind: str | None = None) -> ServerOptions | None:
    """The command-line options naming a server of ``kind``'s (module docstring), or None."""
    return cast(
        "ServerOptions | None", getattr(backend_factory(active_kind(kind)), "server_options", None)
    )


def store_files(kind: str | None = None) -> StoreFiles | None:
    """How ``kind`` keeps its store as files in ``--persist-dir`` (module docstring), or None."""
    return cast(
        "StoreFiles | None", getattr(backend_factory(active_kind(kind)), "store_files", None)
    )
