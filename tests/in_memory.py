"""``memory_collection``: a ``Collection`` over the exact in-memory index (``vectorstore.memory``)
for the tests of retrieval and access that need no store on disk: exact cosine search (ties by
insertion order), ``seam.matches`` filters, parent sections in a LangChain ``InMemoryBaseStore``."""

from __future__ import annotations

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.stores import InMemoryBaseStore

from ragingest.vectorstore.collection import Collection
from ragingest.vectorstore.identity import ACCESS_POLICY_KEY
from ragingest.vectorstore.memory.index import MemoryIndex, Table
from ragingest.vectorstore.port import DenseIndex


def memory_index(name: str = "memory", *, policy: bool = False) -> MemoryIndex:
    """An empty in-memory collection of no backend's; ``policy``: marked as written under an
    access policy (its reads must name principals), as an ingest under a policy marks it."""
    return MemoryIndex(Table(name, {ACCESS_POLICY_KEY: True} if policy else {}))


def memory_collection(
    embeddings: Embeddings,
    lexical: object = None,
    *,
    policy: bool = False,
    index: DenseIndex | None = None,
) -> Collection:
    """A ``Collection`` over ``index`` (default: a new ``memory_index(policy=policy)``), with
    ``lexical`` beside it when given and its parent sections in memory."""
    parents: InMemoryBaseStore[Document] = InMemoryBaseStore()
    chosen = index if index is not None else memory_index(policy=policy)
    return Collection(chosen, embeddings, lexical=lexical, parents=parents)
