"""LangChain's ``Chroma`` methods under the caller's principals: a chromadb client whose
collections AND an access filter into every read.

``langchain_chroma.Chroma`` reads only through the collection its client hands it
(``get_collection`` / ``get_or_create_collection``): ``similarity_search*``,
``max_marginal_relevance_search*``, ``as_retriever``, ``get`` and ``get_by_ids`` all end in that
collection's ``query`` or ``get``. ``GuardedClient`` is that client: its collections'
``query``, ``get``, ``count`` and ``peek`` admit only what ``access`` admits (a Chroma ``where``;
None: everything), or raise ``refuse()``'s error on each read (a collection with an access
policy opened naming nobody). Writes pass through; ``search`` and ``fork`` are refused (their
reads could not be filtered here).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

Where = Mapping[str, object]
Rows = Mapping[str, Sequence[object]]  # chromadb's GetResult / QueryResult


class Collection(Protocol):
    """What ``GuardedCollection`` reads of a chromadb collection."""

    @property
    def name(self) -> str: ...

    @property
    def id(self) -> object: ...

    @property
    def metadata(self) -> Mapping[str, object] | None: ...

    @property
    def configuration(self) -> Mapping[str, object]: ...

    def query(self, **kwargs: object) -> Rows: ...

    def get(self, **kwargs: object) -> Rows: ...

    def count(self) -> int: ...

    def add(self, **kwargs: object) -> None: ...

    def upsert(self, **kwargs: object) -> None: ...

    def update(self, **kwargs: object) -> None: ...

    def delete(self, **kwargs: object) -> None: ...

    def modify(self, **kwargs: object) -> None: ...


class Client(Protocol):
    """What ``GuardedClient`` hands out of a chromadb client."""

    def get_collection(self, *args: object, **kwargs: object) -> Collection: ...

    def get_or_create_collection(self, *args: object, **kwargs: object) -> Collection: ...


def _and(where: Where | None, access: Where | None) -> Where | None:
    if not where or access is None:
        return where or access
    return {"$and": [where, access]}


class GuardedCollection:
    """A chromadb collection whose reads admit only ``access`` (module docstring)."""

    def __init__(
        self, collection: Collection, access: Where | None, refuse: Callable[[], Exception] | None
    ) -> None:
        self.collection, self.access, self.refuse = collection, access, refuse

    def _where(self, where: Where | None) -> Where | None:
        if self.refuse is not None:
            raise self.refuse()
        return _and(where, self.access)

    def query(self, *, where: Where | None = None, **kwargs: object) -> Rows:
        return self.collection.query(where=self._where(where), **kwargs)

    def get(self, ids: object = None, where: Where | None = None, **kwargs: object) -> Rows:
        return self.collection.get(ids=ids, where=self._where(where), **kwargs)

    def count(self) -> int:
        where = self._where(None)
        if where is None:
            return int(self.collection.count())
        return len(self.collection.get(where=where, include=[])["ids"])

    def peek(self, limit: int = 10) -> Rows:
        return self.get(limit=limit, include=["embeddings", "documents", "metadatas"])

    def search(self, *args: object, **kwargs: object) -> Rows:
        raise NotImplementedError("search() is not filtered by principals: use the retriever")

    def fork(self, *args: object, **kwargs: object) -> Collection:
        raise NotImplementedError("a store opened for a reader can't fork its collection")

    def add(self, **kwargs: object) -> None:
        return self.collection.add(**kwargs)

    def upsert(self, **kwargs: object) -> None:
        return self.collection.upsert(**kwargs)

    def update(self, **kwargs: object) -> None:
        return self.collection.update(**kwargs)

    def delete(self, **kwargs: object) -> None:
        return self.collection.delete(**kwargs)

    def modify(self, **kwargs: object) -> None:
        return self.collection.modify(**kwargs)

    @property
    def name(self) -> str:
        return str(self.collection.name)

    @property
    def id(self) -> object:
        return self.collection.id

    @property
    def metadata(self) -> Mapping[str, object] | None:
        return self.collection.metadata

    @property
    def configuration(self) -> Mapping[str, object]:
        return self.collection.configuration


class GuardedClient:
    """A chromadb client whose collections are ``GuardedCollection``s; every other call is the
    client's own."""

    def __init__(
        self, client: Client, access: Where | None, refuse: Callable[[], Exception] | None
    ) -> None:
        self.client, self.access, self.refuse = client, access, refuse

    def get_collection(self, *args: object, **kwargs: object) -> GuardedCollection:
        found = self.client.get_collection(*args, **kwargs)
        return GuardedCollection(found, self.access, self.refuse)

    def get_or_create_collection(self, *args: object, **kwargs: object) -> GuardedCollection:
        found = self.client.get_or_create_collection(*args, **kwargs)
        return GuardedCollection(found, self.access, self.refuse)

    def __getattr__(self, name: str) -> object:
        return getattr(self.client, name)
