"""``ChromaBackend``: the store port's ``Backend`` over a chromadb client (an embedded
directory or a server), the collections' lifecycle through chromadb's public client API.

Chroma-specific choices live here and nowhere else: cosine space and ``SEARCH_EF`` HNSW
candidates per query on every collection created (plain Chroma and langchain_chroma read both
from the collection's metadata), a rename done in place (``modify(name=...)``: same id, so an
open handle keeps working), and the upkeep of an embedded directory (``retention``: deleted
text leaves the disk; ``port.StoreUpkeep``), which a server's collections do not need.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragingest.defaults import SEARCH_EF
from ragingest.vectorstore.chroma.collection_info import chroma_client, is_remote
from ragingest.vectorstore.chroma.index import ChromaIndex

if TYPE_CHECKING:  # imported by ``upkeep``: a reader never needs the records database
    from ragingest.vectorstore.chroma.retention import ChromaRetention

INDEX_SETTINGS = {"hnsw:space": "cosine", "hnsw:search_ef": SEARCH_EF}


class ChromaBackend:
    """The collections of one chromadb client as a ``port.Backend`` (module docstring)."""

    def __init__(self, client: Any, persist_dir: str | Path | None = None) -> None:
        self.client = client
        self.persist_dir = Path(persist_dir) if persist_dir is not None else None
        # chromadb's Collection keeps the name it was fetched with: a rename re-fetches these
        self._opened: weakref.WeakSet[ChromaIndex] = weakref.WeakSet()

    @property
    def remote(self) -> bool:
        return is_remote(self.client)

    def upkeep(self) -> ChromaRetention | None:
        """The retention of an embedded directory (``retention``); None on a server."""
        if self.persist_dir is None or self.remote:
            return None
        from ragingest.vectorstore.chroma.retention import ChromaRetention

        return ChromaRetention(self.persist_dir, self.client)

    def names(self) -> set[str]:
        return {getattr(c, "name", c) for c in self.client.list_collections()}

    def metadata(self, name: str) -> dict[str, Any] | None:
        try:
            return dict(self.client.get_collection(name).metadata or {})
        except Exception:  # chromadb raises NotFoundError or ValueError by version
            return None

    def create(self, name: str, metadata: Mapping[str, Any]) -> ChromaIndex:
        found = self.client.get_or_create_collection(
            name, metadata={**INDEX_SETTINGS, **metadata}
        )
        return self._index(found)

    def open(self, name: str) -> ChromaIndex:
        try:
            found = self.client.get_collection(name)
        except Exception as error:
            raise KeyError(f"no collection {name!r} in the Chroma store") from error
        return self._index(found)

    def _index(self, collection: Any) -> ChromaIndex:
        index = ChromaIndex(collection, self.client.get_max_batch_size())
        self._opened.add(index)
        return index

    def rename(self, old: str, new: str) -> None:
        if self.metadata(new) is not None:
            raise ValueError(f"can't rename {old!r}: collection {new!r} exists")
        handle = self.client.get_collection(old)
        handle.modify(name=new)
        for index in list(self._opened):
            if index.collection.id == handle.id:
                index.collection = self.client.get_collection(new)

    def drop(self, name: str) -> None:
        if self.metadata(name) is not None:
            self.client.delete_collection(name)


def open_chroma(persist_dir: str | Path | None, server: Any = None) -> ChromaBackend:
    """The backend of a Chroma server (``server.ChromaServer``; default: the one of an
    enclosing ``server.use_server``), else of the embedded directory ``persist_dir``."""
    client = server.client() if server is not None else chroma_client(persist_dir)
    return ChromaBackend(client, persist_dir)
