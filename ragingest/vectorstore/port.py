"""The store port: everything ragingest asks of a vector store, typed, whatever the store.

A backend is one folder (``vectorstore/chroma/``, ``vectorstore/memory/``) and one entry in
``backends.BACKENDS`` (a third party's: the ``ragingest.backends`` entry point group). It gives
two things:

- a ``Backend``: the collections of one place (a Chroma directory or server, a process's
  memory) and their lifecycle: which exist (``names``), their metadata (``metadata``: None
  when there is no such collection), ``create``, ``open``, ``rename`` (the swap of a rebuild:
  same data, another name), ``drop``; ``remote`` says whether each call is a network round
  trip. Collections are named by ragingest (``names.safe_name``: ASCII letters, digits and
  ``._-``), the same in every store; a backend whose store refuses such a name maps it inside;
- a ``DenseIndex`` per collection: add (an upsert) and delete by id, metadata replaced in
  place (``update_metadata``), a filtered dense read (``nearest``, ``nearest_chunks``), reads
  by id and filter (``get``, ``held``, ``ids``, ``vectors``) and ``count``. Rows are
  ``seam.StoredChunk``s, filters ``seam.Filter``s, which each backend translates in one place.

Nothing else is the store's: the read gate, the lexical index, the parent sections, the
records and the access filter are composed beside the index in ``collection.Collection``, so
a new backend writes none of them. ``tests/vectorstore/test_port_contract.py`` holds every
registered backend to this contract.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ragingest.vectorstore.seam import Filter, StoredChunk

Metadata = Mapping[str, Any]


@runtime_checkable
class DenseIndex(Protocol):
    """One collection's chunks and their vectors (module docstring).

    Contract: ``add`` stores each id's vector, text and metadata, replacing what the id held;
    ``delete`` forgets ids (unknown ids are no error); ``update_metadata`` replaces the
    metadata of stored ids and nothing else. Every read takes one ``where`` (None: every
    chunk) and returns only chunks it admits; ``nearest``/``nearest_chunks`` give the ``n``
    nearest by cosine distance, nearest first (``nearest_chunks`` leaves out a chunk stored
    without text); ``get`` returns the chunks among ``ids`` (None: all) in the store's order,
    ``limit``/``offset`` paging that order; ids not stored are absent from every read.
    """

    @property
    def name(self) -> str:
        """The collection's name in the store (its physical name)."""
        ...

    @property
    def max_batch(self) -> int:
        """The most rows one ``add`` or ``update_metadata`` call may carry."""
        ...

    def metadata(self) -> dict[str, Any]:
        """The collection's own metadata (model, settings, access policy marker)."""
        ...

    def add(
        self,
        ids: Sequence[str],
        vectors: Sequence[Sequence[float]],
        texts: Sequence[str | None],
        metadatas: Sequence[Metadata],
    ) -> None: ...

    def delete(self, ids: Sequence[str]) -> None: ...

    def update_metadata(self, ids: Sequence[str], metadatas: Sequence[Metadata]) -> None: ...

    def count(self) -> int: ...

    def nearest(
        self, vector: Sequence[float], n: int, where: Filter | None = None
    ) -> list[tuple[str, float]]: ...

    def nearest_chunks(
        self, vector: Sequence[float], n: int, where: Filter | None = None
    ) -> list[tuple[StoredChunk, float]]: ...

    def get(
        self,
        ids: Sequence[str] | None = None,
        where: Filter | None = None,
        *,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[StoredChunk]: ...

    def held(self, ids: Sequence[str], where: Filter | None = None) -> set[str]: ...

    def ids(self, where: Filter | None = None) -> list[str]: ...

    def vectors(
        self, ids: Sequence[str], where: Filter | None = None
    ) -> dict[str, list[float]]: ...


@runtime_checkable
class Backend(Protocol):
    """The collections of one place and their lifecycle (module docstring)."""

    @property
    def remote(self) -> bool: ...

    def names(self) -> set[str]: ...

    def metadata(self, name: str) -> dict[str, Any] | None: ...

    def create(self, name: str, metadata: Metadata) -> DenseIndex:
        """Collection ``name``, created empty with ``metadata`` unless it exists (two first
        runs at once both get the one collection; an existing one keeps its metadata)."""
        ...

    def open(self, name: str) -> DenseIndex:
        """The existing collection ``name`` (``KeyError`` naming it if there is none)."""
        ...

    def rename(self, old: str, new: str) -> None:
        """Give collection ``old`` the name ``new``; open indexes of it keep working and
        report ``new``. ``ValueError`` naming ``new`` when it exists (nothing changes)."""
        ...

    def drop(self, name: str) -> None:
        """Delete collection ``name`` and everything in it (no error if there is none)."""
        ...


# What a backend may offer beyond the port, each optional (a backend without it: None, and
# the run does without). Asked of an open backend: ``upkeep_of``; of a kind before anything
# is opened (``backends.server_options``, ``backends.store_files``): attributes of its
# registered factory.


@runtime_checkable
class StoreUpkeep(Protocol):
    """The upkeep a store that keeps its files here needs so that deleted text leaves the disk
    within the run that deletes it (Chroma's embedded directory: ``chroma.retention``).

    Contract, the run's order: ``begin`` before anything is deleted (journals that upkeep is
    owed; whether an earlier run left it owed); ``bound(name)`` on the collection the run
    writes (keeps what the store logs bounded over revisions); after the writes, when the run
    deleted or rebuilt or upkeep was owed, ``forget(cache)`` (drops the store's copies of
    deleted chunks and the embedding ``cache``'s vectors no collection holds; returns notes
    for the report, one per thing it could not do); then ``settle(notes)`` always: the
    journal goes when ``notes`` is empty, else the next run does it again."""

    def begin(self) -> bool: ...

    def bound(self, name: str) -> None: ...

    def forget(self, cache: Any) -> list[str]: ...

    def settle(self, notes: list[str]) -> None: ...


@runtime_checkable
class KeepsUpkeep(Protocol):
    """A backend that may need ``StoreUpkeep`` (None from ``upkeep`` where it needs none now,
    e.g. its collections live on a server that keeps its own files)."""

    def upkeep(self) -> StoreUpkeep | None: ...


def upkeep_of(backend: Backend) -> StoreUpkeep | None:
    """``backend``'s upkeep, None when it has none."""
    return backend.upkeep() if isinstance(backend, KeepsUpkeep) else None


@runtime_checkable
class StoreServer(Protocol):
    """A server a backend's collections live on, as a command watches it (``cli.server_watch``):
    ``str()`` says where it is."""

    def silent(self, timeout: float) -> bool:
        """Whether it goes ``timeout`` seconds without answering a heartbeat."""
        ...

    def silence_message(self, seconds: float) -> str:
        """The one-line error for a server silent for ``seconds``."""
        ...


@runtime_checkable
class ServerOptions(Protocol):
    """A kind's command-line options naming a server to keep the collections on instead of
    ``--persist-dir`` (Chroma's ``--chroma-host``...: ``chroma.server``)."""

    def add_arguments(self, parser: Any) -> None:
        """Its options, added to an ``argparse`` parser."""
        ...

    def from_args(self, args: object) -> StoreServer | None:
        """The server the parsed ``args`` name, None for none."""
        ...

    def active(self) -> StoreServer | None:
        """The server the enclosing ``use`` chose, None outside one."""
        ...

    def use(self, server: StoreServer | None) -> AbstractContextManager[object]:
        """Within the block, the kind's backends (``open_backend`` with no server) use
        ``server`` (None: the embedded store)."""
        ...

    def timeout(self) -> float:
        """Seconds a server may go silent before a command gives up on it."""
        ...

    def unreachable(self, server: StoreServer | None, error: BaseException) -> str | None:
        """One line for ``error`` when it says the server can't be reached, else None."""
        ...


@runtime_checkable
class StoreFiles(Protocol):
    """A kind whose store is files in ``--persist-dir`` (Chroma's embedded directory:
    ``chroma.readable``, ``chroma.files``). Each call reads or renames files only: nothing is
    opened, so a damaged or read-only store can be handled.

    Contract: ``require`` refuses (``CollectionMismatchError`` saying what to give), creating
    nothing, a ``persist_dir`` that holds no store, unless a server is in use; ``readable``
    yields ``persist_dir`` when it can be read in place, else a temporary copy, removed after
    the block (a store that can't be written: a reader must not write it); ``set_aside``
    renames the store's files to ``*.damaged-<stamp>`` (never deletes), returning the new
    paths; ``main_file`` and ``label`` name the store in messages."""

    main_file: str  # the file SQLite checks and messages name ("chroma.sqlite3")
    label: str  # what users call it ("Chroma database")

    def require(self, persist_dir: str | Path) -> None: ...

    def readable(self, persist_dir: str | Path | None) -> AbstractContextManager[Path | None]: ...

    def copy_if_read_only(self, persist_dir: str | Path) -> tuple[str | Path, object]:
        """The folder to open (``persist_dir``, or a temporary copy when the store can't be
        written) and what keeps that copy (it is removed when that is collected; None when
        read in place)."""
        ...

    def set_aside(self, persist_dir: Path, stamp: str) -> list[Path]: ...
