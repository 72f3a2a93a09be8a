"""The store port: everything ragingest asks of a vector store, typed, whatever the store.

A backend is one folder (``vectorstore/chroma/``, ``vectorstore/memory/``) and one entry in
``backends.BACKENDS`` (a third party's: the ``ragingest.backends`` entry point group). It gives
two things:

- a ``Backend``: the collections of one place (a Chroma directory or server, a process's
  memory) and their lifecycle: which exist (``names``), their metadata (``metadata``: None
  when there is no such collection), ``create``, ``open``, ``rename`` (the swap of a rebuild:
  same data, another name), ``drop``; ``storage_name`` maps the name a user types to one the
  store accepts; ``remote`` says whether each call is a network round trip;
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

    def storage_name(self, typed: str) -> str:
        """The name the store keeps for ``typed`` (any text a user types)."""
        ...

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
        """Give collection ``old`` the name ``new`` (``new`` must not exist); open indexes of
        it keep working."""
        ...

    def drop(self, name: str) -> None:
        """Delete collection ``name`` and everything in it (no error if there is none)."""
        ...
