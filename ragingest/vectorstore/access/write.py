"""Readers written in place: a document's ``access`` list (``schema.ACCESS_KEY``) replaced on
its chunks and its parent sections without touching their text or vectors, so a change of
permissions alone embeds nothing.

Contract: ``chunk_access`` updates only the ``access`` key of each chunk (Chroma's ``update``
merges the keys it is given into the stored metadata); ``parent_access`` rewrites the parent
sections ``keys`` of any LangChain ``BaseStore`` with the new list. The writer calls both under
the read gate held exclusively (``ChunkStore.set_access``), so a reader sees a file's old
readers on every copy or its new ones on every copy, never a mix.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from langchain_core.documents import Document
from langchain_core.stores import BaseStore

from ragingest.schema import ACCESS_KEY


def stored_access(access: Sequence[str]) -> list[str]:
    """``access`` as every copy stores it: sorted, each principal once."""
    return sorted(set(access))


class Updatable(Protocol):
    """A chromadb collection as ``chunk_access`` writes it: ``update`` merges the keys given."""

    def update(self, *, ids: list[str], metadatas: list[dict[str, list[str]]]) -> None: ...


def chunk_access(collection: Updatable, ids: Sequence[str], access: list[str], step: int) -> None:
    """Set ``access`` on the chunks ``ids`` of a chromadb ``collection``, ``step`` ids a call
    (the client's max batch size)."""
    for i in range(0, len(ids), step):
        part = list(ids[i : i + step])
        collection.update(ids=part, metadatas=[{ACCESS_KEY: access} for _ in part])


def parent_access(store: BaseStore[str, Document], keys: Sequence[str], access: list[str]) -> None:
    """Set ``access`` on the parent sections ``keys`` that ``store`` holds."""
    keys = list(keys)
    found = store.mget(keys)
    changed = [
        (key, _with_access(doc, access))
        for key, doc in zip(keys, found, strict=True)
        if doc is not None
    ]
    if changed:
        store.mset(changed)


def _with_access(doc: Document, access: list[str]) -> Document:
    return Document(page_content=doc.page_content, metadata={**doc.metadata, ACCESS_KEY: access})
