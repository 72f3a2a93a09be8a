"""The lexical index: BM25 over stemmed words, in SQLite FTS5 beside Chroma.

Dense vectors blur exact tokens: «E-07», «ст. 81», «4990» look like any other code to the
model. This index finds them. Why FTS5 (stdlib ``sqlite3``) and not an in-memory BM25 such as
bm25s: every ingest adds and deletes a few chunks, and FTS5 updates its postings in place, in a
transaction, in one file beside Chroma, where bm25s would rebuild and rewrite its matrices on
every change. Its ``bm25()`` is Okapi BM25 (k1 = 1.2, b = 0.75).

Contract:

- ``terms``, ``query_terms``, ``ranking_terms``, ``lexical_text``: ``lexical_terms`` (what
  both backends index and match), importable from here too.
- ``LexicalIndex(persist_dir, collection)``: one FTS5 table per physical Chroma collection in
  ``ragingest_lexical.sqlite``; ``add`` is an upsert by chunk id, ``delete`` removes ids (absent
  ones are ignored), ``drop`` removes the collection's table, ``search`` returns ``(id, score)``
  best first (score = -bm25, higher is better). Nothing is written until the first ``add``; a
  missing file reads as an empty index. The collection writes it together with its store. Each
  thread keeps one connection to the file (opened again when the file is replaced or the
  process forked): a search costs no connect.
- ``search`` (``lexical_search``) returns exactly what FTS5's ``OR`` query over
  ``ranking_terms`` returns (same ids, order and scores), from per-term postings kept in a
  ``lexical_cache.TermCache`` that the instance's threads share (up to ~128 MB): a term's
  postings are read from FTS5 once per index version. Every write transaction raises the
  file's version (``lexical_cache.raise_version``); a search reads it in the snapshot it
  reads all else in, so it never mixes cached rows of another state (SQLite's
  ``data_version`` cannot tell: its values are per connection, and a new connection knows
  nothing of what an older one cached).
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ragingest.vectorstore.lexical.cache import TermCache, create_version, raise_version
from ragingest.vectorstore.lexical.search import FtsTables, search_snapshot
from ragingest.vectorstore.lexical.terms import lexical_text, query_terms, ranking_terms, terms
from ragingest.vectorstore.records.sqlite_local import ThreadLocalConnection

__all__ = [
    "LEXICAL_FILE",
    "LexicalIndex",
    "drop_orphans",
    "lexical_collections",
    "lexical_text",
    "query_terms",
    "ranking_terms",
    "terms",
]

LEXICAL_FILE = "ragingest_lexical.sqlite"


class LexicalIndex:
    """BM25 over one physical collection's chunks (see the module docstring)."""

    def __init__(self, persist_dir: str | Path, collection: str) -> None:
        self.path = Path(persist_dir) / LEXICAL_FILE
        self.collection = collection
        digest = hashlib.sha256(collection.encode("utf-8")).hexdigest()[:16]
        self._text, self._ids = f"lex_{digest}", f"lex_{digest}_ids"
        self._vocab = f"lex_{digest}_vocab"
        self._db = ThreadLocalConnection(self.path, wal=True)
        self._cache = TermCache()

    def _connection(self) -> sqlite3.Connection:
        """This thread's connection to the file (``sqlite_local``)."""
        return self._db.get()

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """One transaction on this thread's connection (``_connection``)."""
        db = self._connection()
        with db:
            yield db

    def close(self) -> None:
        """Close this thread's connection (the next call opens another)."""
        self._db.close()

    def _create(self, db: sqlite3.Connection) -> None:
        db.execute(
            "CREATE TABLE IF NOT EXISTS lexical_collections "
            "(collection TEXT PRIMARY KEY, text_table TEXT NOT NULL)"
        )
        db.execute(
            "INSERT OR IGNORE INTO lexical_collections VALUES (?, ?)", (self.collection, self._text)
        )
        db.execute(
            f"CREATE TABLE IF NOT EXISTS {self._ids} (n INTEGER PRIMARY KEY, id TEXT UNIQUE)"
        )
        db.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {self._text} USING fts5(terms, "
            "tokenize = \"unicode61 remove_diacritics 0 tokenchars '_'\")"
        )
        create_version(db)

    def _exists(self, db: sqlite3.Connection) -> bool:
        row = db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (self._ids,)
        ).fetchone()
        return row is not None

    def add(self, ids: Sequence[str], texts: Sequence[str]) -> None:
        """Index ``texts`` under their Chroma ``ids``, replacing what those ids held."""
        if not ids:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db:
            self._create(db)
            raise_version(db)
            self._remove(db, ids)
            for chunk_id, text in zip(ids, texts, strict=True):
                n = db.execute(f"INSERT INTO {self._ids} (id) VALUES (?)", (chunk_id,)).lastrowid
                db.execute(
                    f"INSERT INTO {self._text} (rowid, terms) VALUES (?, ?)",
                    (n, " ".join(terms(text))),
                )

    def delete(self, ids: Iterable[str]) -> None:
        """Remove the chunks ``ids`` from the index (nothing to do without an index)."""
        ids = list(ids)
        if not ids or not self.path.exists():
            return
        with self._connect() as db:
            if self._exists(db):
                create_version(db)
                raise_version(db)
                self._remove(db, ids)

    def _remove(self, db: sqlite3.Connection, ids: Sequence[str]) -> None:
        for i in range(0, len(ids), 500):
            batch = list(ids[i : i + 500])
            marks = ",".join("?" * len(batch))
            found = db.execute(f"SELECT n FROM {self._ids} WHERE id IN ({marks})", batch)
            rows = [row[0] for row in found]
            if rows:
                db.executemany(f"DELETE FROM {self._text} WHERE rowid = ?", [(n,) for n in rows])
                db.executemany(f"DELETE FROM {self._ids} WHERE n = ?", [(n,) for n in rows])

    def drop(self) -> None:
        """Forget the collection (its Chroma collection was deleted)."""
        if not self.path.exists():
            return
        with self._connect() as db:
            create_version(db)
            raise_version(db)  # the first write opens the transaction the DDL then runs in
            db.execute(f"DROP TABLE IF EXISTS {self._text}")
            db.execute(f"DROP TABLE IF EXISTS {self._ids}")
            if _has_registry(db):
                db.execute(
                    "DELETE FROM lexical_collections WHERE collection = ?", (self.collection,)
                )

    def rename_to(self, collection: str) -> None:
        """Move this index to ``collection`` (whose own index is dropped), in one
        transaction; nothing when this one has none."""
        if not self.path.exists():
            return
        target = LexicalIndex(self.path.parent, collection)
        with self._connect() as db:
            if not self._exists(db):
                return
            create_version(db)
            raise_version(db)  # the first write opens the transaction the DDL then runs in
            db.execute("DELETE FROM lexical_collections WHERE collection = ?", (collection,))
            db.execute(
                "UPDATE lexical_collections SET collection = ?, text_table = ? "
                "WHERE collection = ?",
                (collection, target._text, self.collection),
            )
            db.execute(f"DROP TABLE IF EXISTS {target._text}")
            db.execute(f"DROP TABLE IF EXISTS {target._ids}")
            db.execute(f"ALTER TABLE {self._text} RENAME TO {target._text}")
            db.execute(f"ALTER TABLE {self._ids} RENAME TO {target._ids}")

    def ids(self) -> set[str]:
        """The ids of the indexed chunks (empty without an index)."""
        if not self.path.exists():
            return set()
        with self._connect() as db:
            if not self._exists(db):
                return set()
            return {row[0] for row in db.execute(f"SELECT id FROM {self._ids}")}

    def count(self) -> int:
        """The number of indexed chunks (0 without an index)."""
        if not self.path.exists():
            return 0
        with self._connect() as db:
            if not self._exists(db):
                return 0
            return int(db.execute(f"SELECT count(*) FROM {self._ids}").fetchone()[0])

    def search(self, query: str, limit: int, offset: int = 0) -> list[tuple[str, float]]:
        """The ``limit`` best chunks for ``query`` after the first ``offset``, as
        ``(chroma id, score)``, best first; ``[]`` when no term of the query is indexed."""
        unique = query_terms(query)
        if not unique or limit <= 0 or not self.path.exists():
            return []
        with self._connect() as db:
            db.execute("BEGIN")  # one snapshot: the version, the counts, the postings, the ids
            if not self._exists(db):
                return []
            tables = FtsTables(self._text, self._ids, self._vocab)
            return search_snapshot(db, tables, self._cache, unique, limit, offset)


def lexical_collections(persist_dir: str | Path) -> list[str]:
    """The physical collections that have a lexical index in ``persist_dir``."""
    path = Path(persist_dir) / LEXICAL_FILE
    if not path.exists():
        return []
    db = sqlite3.connect(str(path), timeout=60)
    try:
        if not _has_registry(db):
            return []
        return sorted(row[0] for row in db.execute("SELECT collection FROM lexical_collections"))
    finally:
        db.close()


def drop_orphans(persist_dir: str | Path, alive: Callable[[], set[str]]) -> list[str]:
    """Drop the indexes of collections not in ``alive()`` (Chroma's collections: a rebuild's
    old one, one deleted by hand); returns their names. The index list is read before
    ``alive()``, so a collection created meanwhile is never taken for gone."""
    indexed = lexical_collections(persist_dir)
    if not indexed:
        return []
    living = alive()
    gone = [name for name in indexed if name not in living]
    for name in gone:
        LexicalIndex(persist_dir, name).drop()
    return gone


def _has_registry(db: sqlite3.Connection) -> bool:
    found = db.execute("SELECT 1 FROM sqlite_master WHERE name = 'lexical_collections'")
    return found.fetchone() is not None
