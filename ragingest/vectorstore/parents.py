"""The parent docstore: the sections that parent expansion returns, in SQLite beside Chroma.

The parent-child scheme: search goes over the small chunks, the context gets their
larger parent block. A chunk's metadata names its parent (``parent_id``, ``parent_start``,
``parent_end``, see ``schema``); the parent's text lives here, one row per (physical
collection, parent_id), written when its chunks are written (``ChunkStore.add_documents``).
It is a LangChain ``BaseStore[str, Document]``, so LangChain's own parent-document tools can
use it too. A parent no chunk refers to any more is never returned; ``prune`` drops such rows.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

from langchain_core.documents import Document
from langchain_core.stores import BaseStore

PARENTS_FILE = "ragingest_parents.sqlite"


class ParentStore(BaseStore[str, Document]):
    """The parent sections of one collection's chunks (``parent_id`` → ``Document``), in SQLite
    beside Chroma."""

    def __init__(self, persist_dir: str | Path, collection: str) -> None:
        folder = Path(persist_dir)
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / PARENTS_FILE
        self.collection = collection
        self._lock = threading.Lock()
        with self._connect() as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS parents (collection TEXT NOT NULL, "
                "parent_id TEXT NOT NULL, text TEXT NOT NULL, metadata TEXT NOT NULL, "
                "PRIMARY KEY (collection, parent_id))"
            )

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(str(self.path), timeout=30)
        db.execute("PRAGMA journal_mode=WAL")
        return db

    def mget(self, keys: Sequence[str]) -> list[Document | None]:
        """The parent of each key, ``None`` where there is none (same order as ``keys``)."""
        found: dict[str, Document] = {}
        with self._lock, self._connect() as db:
            for i in range(0, len(keys), 500):
                batch = list(keys[i : i + 500])
                marks = ",".join("?" * len(batch))
                rows = db.execute(
                    f"SELECT parent_id, text, metadata FROM parents "
                    f"WHERE collection = ? AND parent_id IN ({marks})",
                    [self.collection, *batch],
                )
                for key, text, metadata in rows:
                    found[key] = Document(page_content=text, metadata=json.loads(metadata))
        return [found.get(key) for key in keys]

    def mset(self, key_value_pairs: Sequence[tuple[str, Document]]) -> None:
        """Store each ``(parent_id, document)``, replacing what an id held."""
        rows = [
            (self.collection, key, doc.page_content, json.dumps(doc.metadata, ensure_ascii=False))
            for key, doc in key_value_pairs
        ]
        with self._lock, self._connect() as db:
            db.executemany("INSERT OR REPLACE INTO parents VALUES (?, ?, ?, ?)", rows)

    def mdelete(self, keys: Sequence[str]) -> None:
        """Delete the parents ``keys`` (missing ones are ignored)."""
        with self._lock, self._connect() as db:
            db.executemany(
                "DELETE FROM parents WHERE collection = ? AND parent_id = ?",
                [(self.collection, key) for key in keys],
            )

    def yield_keys(self, *, prefix: str | None = None) -> Iterator[str]:
        """The parent ids of this collection in order, only those starting with ``prefix`` when
        given."""
        with self._lock, self._connect() as db:
            rows = db.execute(
                "SELECT parent_id FROM parents WHERE collection = ? ORDER BY parent_id",
                [self.collection],
            ).fetchall()
        for (key,) in rows:
            if prefix is None or key.startswith(prefix):
                yield key

    def drop(self) -> None:
        """Forget every parent of this collection (the collection is dropped)."""
        with self._lock, self._connect() as db:
            db.execute("DELETE FROM parents WHERE collection = ?", [self.collection])

    def prune(self, live: set[str]) -> int:
        """Delete the parents whose id is not in ``live``; returns how many went."""
        dead = [key for key in self.yield_keys() if key not in live]
        self.mdelete(dead)
        return len(dead)


def parent_collections(persist_dir: str | Path) -> list[str]:
    """The physical collections with parent rows in ``persist_dir`` (creates nothing)."""
    path = Path(persist_dir) / PARENTS_FILE
    if not path.is_file():
        return []
    with contextlib.closing(sqlite3.connect(str(path), timeout=30)) as db:
        try:
            rows = db.execute("SELECT DISTINCT collection FROM parents").fetchall()
        except sqlite3.OperationalError:  # no table yet
            return []
    return sorted(row[0] for row in rows)


def parent_documents(
    documents: Sequence[Document], parent_texts: Sequence[str]
) -> list[tuple[str, Document]]:
    """``(parent_id, parent Document)`` for every distinct parent of chunk Documents, whose
    parent sections' texts are ``parent_texts``; the parent's metadata is its file's plus its
    span."""
    parents: dict[str, Document] = {}
    for doc, text in zip(documents, parent_texts, strict=True):
        meta = doc.metadata
        key = meta.get("parent_id")
        if not key or key in parents:
            continue
        keep = ("source", "title", "doc_id", "file_type", "language", "doc_date")
        metadata = {k: meta[k] for k in keep if k in meta}
        metadata |= {"start_index": meta["parent_start"], "end_index": meta["parent_end"]}
        parents[key] = Document(page_content=text, metadata=metadata)
    return list(parents.items())
