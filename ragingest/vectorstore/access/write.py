"""Readers written in place: a document's ``access`` list (``schema.ACCESS_KEY``) replaced on
its chunks and its parent sections without touching their text or vectors, so a change of
permissions alone embeds nothing.

Contract: ``chunk_access`` changes only the ``access`` key of each chunk of a
``port.DenseIndex`` (its other metadata read and written back whole: ``update_metadata``
replaces) and returns their parent ids; ``parent_access`` rewrites the parent sections
``keys`` of any LangChain ``BaseStore`` with the new list. The writer calls both under the
read gate held exclusively (``Collection.set_access``), so a reader sees a file's old readers
on every copy or its new ones on every copy, never a mix.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.documents import Document
from langchain_core.stores import BaseStore

from ragingest.schema import ACCESS_KEY
from ragingest.vectorstore.port import DenseIndex

PAGE = 1000  # chunks per index read


def stored_access(access: Sequence[str]) -> list[str]:
    """``access`` as every copy stores it: sorted, each principal once."""
    return sorted(set(access))


def chunk_access(
    index: DenseIndex, ids: Sequence[str], access: list[str], page: int = PAGE
) -> set[str]:
    """Set ``access`` on the chunks ``ids`` of ``index``, ``page`` ids a read; returns the
    parent ids of those chunks."""
    parents: set[str] = set()
    for i in range(0, len(ids), page):
        chunks = index.get(list(ids[i : i + page]))
        parents |= {str(c.metadata["parent_id"]) for c in chunks if "parent_id" in c.metadata}
        metadatas = [{**c.metadata, ACCESS_KEY: access} for c in chunks]
        index.update_metadata([c.id for c in chunks], metadatas)
    return parents


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
