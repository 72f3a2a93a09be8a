"""The parent docstore: the sections that parent expansion returns.

The parent-child scheme: search goes over the small chunks, the context gets their
larger parent block. A chunk's metadata names its parent (``parent_id``, ``parent_start``,
``parent_end``, see ``schema``); the parent's text lives here, one entry per (physical
collection, parent_id), written when its chunks are written (the collection's ``add_documents``).
It is a LangChain ``BaseStore[str, Document]`` over the key-value store (``vectorstore.kv``:
namespace ``parents/<physical collection>``, the value the JSON of text and metadata), in the
records database when it is PostgreSQL (every machine reads the same parents), else in
``ragingest_parents.sqlite`` beside Chroma; that file's earlier table (``parents``) is moved
into the store the first time it is opened. A parent no chunk refers to any more is never
returned; ``prune`` drops such entries.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path

from langchain_core.documents import Document
from langchain_core.stores import BaseStore
from sqlalchemy import select

from ragingest.schema import ACCESS_KEY
from ragingest.vectorstore.records.kv import KV_TABLE, kv_engine, kv_store

PARENTS_FILE = "ragingest_parents.sqlite"
PREFIX = "parents/"
COPY_BATCH = 500  # entries read and written at a time by ``copy_to``
# the table of earlier versions, as (namespace, key, value) rows of the key-value store
LEGACY = (
    "parents",
    "SELECT 'parents/' || collection, parent_id, CAST(json_object('text', text, "
    "'metadata', json(metadata)) AS BLOB) FROM parents",
)


class ParentStore(BaseStore[str, Document]):
    """The parent sections of one physical collection (see the module docstring)."""

    def __init__(
        self, persist_dir: str | Path | None, collection: str, records_url: str | None = None
    ) -> None:
        self.collection = collection
        self.persist_dir, self.records_url = persist_dir, records_url
        self.store = kv_store(persist_dir, records_url, PARENTS_FILE, PREFIX + collection, LEGACY)

    def mget(self, keys: Sequence[str]) -> list[Document | None]:
        return [None if raw is None else _document(raw) for raw in self.store.mget(keys)]

    def mset(self, key_value_pairs: Sequence[tuple[str, Document]]) -> None:
        self.store.mset([(key, _encode(doc)) for key, doc in key_value_pairs])

    def mdelete(self, keys: Sequence[str]) -> None:
        self.store.mdelete(keys)

    def yield_keys(self, *, prefix: str | None = None) -> Iterator[str]:
        return self.store.yield_keys(prefix=prefix)

    def drop(self) -> None:
        """Forget every parent of this collection (the collection is dropped)."""
        self.store.mdelete(list(self.store.yield_keys()))

    def copy_to(self, collection: str) -> int:
        """Make ``collection``'s parents a copy of this collection's (its own entries replaced);
        nothing when this one has none. Repeating it gives the same result, so a step cut
        short is simply run again. Returns the entries copied."""
        keys = list(self.store.yield_keys())
        if not keys:
            return 0
        target = ParentStore(self.persist_dir, collection, self.records_url)
        target.drop()
        for start in range(0, len(keys), COPY_BATCH):
            part = keys[start : start + COPY_BATCH]
            values = self.store.mget(part)
            target.store.mset([(k, v) for k, v in zip(part, values, strict=True) if v is not None])
        return len(keys)
    def prune(self, live: set[str]) -> int:
        """Delete the parents whose id is not in ``live``; returns how many went."""
        dead = [key for key in self.yield_keys() if key not in live]
        self.mdelete(dead)
        return len(dead)


def _encode(doc: Document) -> bytes:
    return json.dumps(
        {"text": doc.page_content, "metadata": doc.metadata}, ensure_ascii=False
    ).encode()


def _document(raw: bytes) -> Document:
    value = json.loads(raw)
    return Document(page_content=value["text"], metadata=value["metadata"])


def parent_collections(persist_dir: str | Path | None, records_url: str | None = None) -> list[str]:
    """The physical collections with parent sections (creates nothing beside Chroma when
    there is no parents file yet)."""
    from ragingest.vectorstore.records.database import is_shared

    if (
        not is_shared(persist_dir, records_url)
        and not (Path(persist_dir or ".") / PARENTS_FILE).is_file()
    ):
        return []
    engine = kv_engine(persist_dir, records_url, PARENTS_FILE, LEGACY)
    statement = (
        select(KV_TABLE.c.namespace).where(KV_TABLE.c.namespace.startswith(PREFIX)).distinct()
    )
    with engine.connect() as connection:
        rows = connection.execute(statement)
        return sorted(row[0].removeprefix(PREFIX) for row in rows)


def parent_documents(
    documents: Sequence[Document], parent_texts: Sequence[str]
) -> list[tuple[str, Document]]:
    """``(parent_id, parent Document)`` for every distinct parent of chunk Documents, whose
    parent sections' texts are ``parent_texts``; the parent's metadata is its file's plus its
    span, and its readers (``schema.ACCESS_KEY``) where the chunk has them."""
    parents: dict[str, Document] = {}
    for doc, text in zip(documents, parent_texts, strict=True):
        meta = doc.metadata
        key = meta.get("parent_id")
        if not key or key in parents:
            continue
        keep = ("source", "title", "doc_id", "file_type", "language", "doc_date", ACCESS_KEY)
        metadata = {k: meta[k] for k in keep if k in meta}
        metadata |= {"start_index": meta["parent_start"], "end_index": meta["parent_end"]}
        parents[key] = Document(page_content=text, metadata=metadata)
    return list(parents.items())
