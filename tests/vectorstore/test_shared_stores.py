"""The stores beside Chroma: the lexical index in PostgreSQL ranks exactly as the SQLite FTS5
one (same terms, same BM25), the parents and the embedding cache on LangChain's ``SQLStore``
(in PostgreSQL with a PostgreSQL records database), and stores written by the earlier SQLite
schema still open (moved into the store once)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
import uuid

import numpy as np
import pytest
from langchain_core.documents import Document

from ragingest.vectorstore.cache import CACHE_FILE, cached_embeddings
from ragingest.vectorstore.lexical.index import LexicalIndex
from ragingest.vectorstore.lexical.location import lexical_index
from ragingest.vectorstore.lexical.pg import PgLexicalIndex, pg_lexical_collections
from ragingest.vectorstore.records.database import records_engine
from ragingest.vectorstore.records.parents import PARENTS_FILE, ParentStore, parent_collections

TEXTS = {
    "a": "Код ошибки E-07: засор фильтра. Очистите фильтр и перезапустите посудомоечную машину.",
    "b": "Ошибка E-08 означает перегрев воды; выключите машину и дайте ей остыть.",
    "c": "Цена 4 990 рублей за фильтр, фильтры продаются в сервисном центре.",
    "d": "The filter clogs when the machine runs without salt; clean the filter monthly.",
    "e": "Running machines need filters: filters, filtering, filtered water everywhere.",
    "f": "Статья 81 ТК РФ: расторжение трудового договора по инициативе работодателя.",
    "g": "ст. 81 применяется к сотрудникам, нарушившим правила; ст. 80 — по собственному.",
    "h": "Фильтр фильтр фильтр: повтор слова меняет частоту термина в BM25.",
}
QUERIES = [
    "E-07",
    "фильтр",
    "filters machine",
    "4990",
    "ст. 81",
    "ошибка фильтра машина",
    "the water",
    "нет такого слова",
    "",
]


@pytest.fixture
def pg_url(pg) -> str:
    return pg.create_database(f"t_{uuid.uuid4().hex[:12]}")


def test_postgres_bm25_ranks_as_fts5(tmp_path, pg_url):
    sqlite_index = LexicalIndex(tmp_path, "kb")
    pg_index = PgLexicalIndex(records_engine(None, pg_url), "kb")
    for index in (sqlite_index, pg_index):
        index.add(list(TEXTS), list(TEXTS.values()))
        index.add(["a"], [TEXTS["a"]])  # an upsert, not a second row
    PgLexicalIndex(records_engine(None, pg_url), "other").add(["x"], ["фильтр " * 50])
    for query in QUERIES:
        want = sqlite_index.search(query, 10)
        got = pg_index.search(query, 10)
        assert [i for i, _ in got] == [i for i, _ in want], query
        assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-6), query
    assert pg_index.search("фильтр", 2, offset=1) == sqlite_index.search("фильтр", 2, offset=1)
    assert pg_index.count() == 8 and pg_index.ids() == set(TEXTS)
    pg_index.delete(["a", "zz"])
    assert "a" not in {i for i, _ in pg_index.search("E-07", 5)} and pg_index.count() == 7
    assert pg_lexical_collections(pg_index.engine) == ["kb", "other"]
    pg_index.drop()
    assert pg_index.count() == 0 and pg_lexical_collections(pg_index.engine) == ["other"]


def test_both_backends_leave_out_the_same_common_terms(tmp_path, pg_url):
    rows = {"x1": "кот собака", "x2": "кот", "x3": "кот мышь", "x4": "рыба"}  # кот: 3 of 4
    sqlite_index = LexicalIndex(tmp_path, "kb")
    pg_index = PgLexicalIndex(records_engine(None, pg_url), "kb")
    for index in (sqlite_index, pg_index):
        index.add(list(rows), list(rows.values()))
    for query, want in [("кот собака", ["x1"]), ("кот", ["x2", "x1", "x3"]), ("слон", [])]:
        assert [i for i, _ in sqlite_index.search(query, 10)] == want, query
        got = pg_index.search(query, 10)
        assert [i for i, _ in got] == want, query
        expected = [s for _, s in sqlite_index.search(query, 10)]
        assert [s for _, s in got] == pytest.approx(expected, rel=1e-6), query


def test_the_records_url_picks_the_backend(tmp_path, pg_url):
    assert isinstance(lexical_index(tmp_path, "kb"), LexicalIndex)
    assert isinstance(lexical_index(None, "kb", pg_url), PgLexicalIndex)
    parents = ParentStore(None, "kb", pg_url)
    doc = Document(page_content="Раздел целиком", metadata={"start_index": 0, "end_index": 14})
    parents.mset([("p1", doc)])
    assert ParentStore(tmp_path / "elsewhere", "kb", pg_url).mget(["p1", "p2"]) == [doc, None]
    assert parent_collections(None, pg_url) == ["kb"] and not (tmp_path / "elsewhere").exists()
    cache = cached_embeddings(None, "m", "fp", lambda: FixedEmbeddings(), records_url=pg_url)
    assert cache.embed_documents(["a", "b", "a"]) == [[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]]
    again = cached_embeddings(None, "m", "fp", lambda: FixedEmbeddings(), records_url=pg_url)
    assert again.embed_documents(["a", "b"]) == [[1.0, 1.0], [1.0, 1.0]]
    assert (cache.computed, again.computed, again.cached) == (2, 0, 2)


class FixedEmbeddings:
    computed = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        FixedEmbeddings.computed += len(texts)
        return [[1.0, 1.0] for _ in texts]

    def embed_query(self, text: str) -> list[float]:
        return [1.0, 1.0]


def test_stores_of_the_earlier_sqlite_schema_still_open(tmp_path):
    """Files as earlier versions wrote them: ``parents`` and ``byte_store`` tables."""
    meta = {"source": "a.md", "start_index": 3, "end_index": 40}
    with contextlib.closing(sqlite3.connect(tmp_path / PARENTS_FILE)) as db, db:
        db.execute(
            "CREATE TABLE parents (collection TEXT NOT NULL, parent_id TEXT NOT NULL, "
            "text TEXT NOT NULL, metadata TEXT NOT NULL, PRIMARY KEY (collection, parent_id))"
        )
        db.execute(
            "INSERT INTO parents VALUES (?, ?, ?, ?)",
            ("kb", "p1", "Раздел «один»", json.dumps(meta, ensure_ascii=False)),
        )
        db.execute("INSERT INTO parents VALUES ('kb__2', 'p9', 'x', '{}')")
    vector = np.asarray([0.25, -1.5], dtype="<f4").tobytes()
    key = "fp:" + hashlib.sha256(b"old text").hexdigest()
    with contextlib.closing(sqlite3.connect(tmp_path / CACHE_FILE)) as db, db:
        db.execute("CREATE TABLE byte_store (key TEXT PRIMARY KEY, value BLOB NOT NULL)")
        db.execute("INSERT INTO byte_store VALUES (?, ?)", (key, vector))

    assert parent_collections(tmp_path) == ["kb", "kb__2"]
    store = ParentStore(tmp_path, "kb")
    assert store.mget(["p1"]) == [Document(page_content="Раздел «один»", metadata=meta)]
    assert list(ParentStore(tmp_path, "kb__2").yield_keys()) == ["p9"]
    cache = cached_embeddings(tmp_path, "m", "fp", lambda: FixedEmbeddings())
    assert cache.embed_documents(["old text"]) == [[0.25, -1.5]] and cache.computed == 0
    for name in (PARENTS_FILE, CACHE_FILE):  # moved once: the old tables are gone
        with contextlib.closing(sqlite3.connect(tmp_path / name)) as db:
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        assert "parents" not in tables and "byte_store" not in tables
    assert ParentStore(tmp_path, "kb").mget(["p1"])[0].metadata == meta  # and opens again


def test_the_ray_split_reads_the_cached_text_hashes_of_one_model(tmp_path):
    from ragingest.vectorstore.cache import cached_text_hashes

    cache = cached_embeddings(tmp_path, "m", "fp", lambda: FixedEmbeddings())
    cache.embed_documents(["a", "b"])
    cached_embeddings(tmp_path, "m", "fq", lambda: FixedEmbeddings()).embed_documents(["c"])
    digest = [int(hashlib.sha256(t.encode()).hexdigest()[:16], 16) for t in ("a", "b")]
    assert cached_text_hashes(cache).tolist() == sorted(digest)
