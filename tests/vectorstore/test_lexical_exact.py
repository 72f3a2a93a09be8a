"""The lexical search sums kept per-term postings: it returns exactly what FTS5's own ``OR``
query returns (ids, order, scores to the bit), before and after writes from this or another
connection, and the cache holds one index version."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from ragingest.vectorstore.lexical.cache import Postings, TermCache
from ragingest.vectorstore.lexical.index import LexicalIndex, query_terms, ranking_terms

COMMON = ["data", "table", "query", "index", "server"]  # English words: stemmed as themselves
RARE = [f"code{n}" for n in range(40)]


def corpus(seed: int, rows: int) -> tuple[list[str], list[str]]:
    """``rows`` texts of common words (some in most rows), rare codes and repeats, with
    copies (exact score ties) under ids whose order differs from the insertion order."""
    rng = random.Random(seed)
    texts = []
    for n in range(rows):
        if n % 10 == 9:
            texts.append(texts[rng.randrange(len(texts))])  # a copy: tied with its original
            continue
        words = ["data"] * (n % 3 != 0)  # "data" in two rows of three: left out of a match
        words += rng.choices(COMMON[1:], k=rng.randint(0, 6))
        words += rng.choices(RARE, weights=range(40, 0, -1), k=rng.randint(0, 4))
        words += [rng.choice(RARE)] * rng.randint(0, 3)  # a term repeated in a row
        rng.shuffle(words)
        texts.append(" ".join(words) or "empty")
    ids = [f"id{rng.randrange(10**6):06d}-{n}" for n in range(rows)]
    return ids, texts


QUERIES = [
    "table query",
    "code0 code1 code2 table",
    "code7 code7 table code7",  # a duplicated term
    "code39 absentword code3",  # a term no row holds
    "data table index server query code5",  # "data" in most rows: left out
    "data",  # only a term in most rows: matched after all
    "code12",
    "server server",
]


def fts5_or_query(path: Path, collection: str, query: str, limit: int, offset: int):
    """FTS5's own ranking of the terms ``ranking_terms`` chooses: the reference."""
    db = sqlite3.connect(str(path))
    try:
        (table,) = db.execute(
            "SELECT text_table FROM lexical_collections WHERE collection = ?", (collection,)
        ).fetchone()
        unique = query_terms(query)
        db.execute(f"CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, {table}, 'row')")
        counts = dict(db.execute("SELECT term, doc FROM temp.v"))
        total = db.execute(f"SELECT count(*) FROM {table}_ids").fetchone()[0]
        chosen = ranking_terms(unique, counts, total)
        if not chosen:
            return []
        rows = db.execute(
            f"SELECT i.id, bm25({table}) AS s FROM {table} JOIN {table}_ids AS i "
            f"ON i.n = {table}.rowid WHERE {table} MATCH ? ORDER BY s, i.id LIMIT ? OFFSET ?",
            (" OR ".join(f'"{t}"' for t in chosen), limit, offset),
        ).fetchall()
        return [(chunk_id, -float(score)) for chunk_id, score in rows]
    finally:
        db.close()


def assert_same_as_fts5(index: LexicalIndex) -> int:
    compared = 0
    for query in QUERIES:
        for limit, offset in [(1, 0), (7, 0), (20, 0), (20, 13), (5000, 0), (3, 400)]:
            expected = fts5_or_query(index.path, index.collection, query, limit, offset)
            assert index.search(query, limit, offset) == expected, (query, limit, offset)
            compared += len(expected)
    return compared


def test_search_equals_the_fts5_or_query_to_the_bit(tmp_path):
    index = LexicalIndex(tmp_path, "c")
    ids, texts = corpus(1, 1500)
    index.add(ids, texts)
    assert assert_same_as_fts5(index) > 4000
    assert assert_same_as_fts5(index) > 4000  # again, from the cache
    tied = fts5_or_query(index.path, "c", "code12", 5000, 0)
    assert len({s for _, s in tied}) < len(tied)  # the corpus has ties, broken by id
    once = fts5_or_query(index.path, "c", "code7 table", 20, 0)
    assert index.search("code7 code7 table code7", 20) == once  # a repeated term counts once


def test_writes_from_any_connection_are_seen_by_the_next_search(tmp_path):
    index = LexicalIndex(tmp_path, "c")
    ids, texts = corpus(2, 800)
    index.add(ids, texts)
    assert_same_as_fts5(index)
    other = LexicalIndex(tmp_path, "c")  # another connection, another cache
    other.add(ids[:50], [t + " code0 code0" for t in texts[:50]])  # rows replaced
    other.delete(ids[100:300])
    other.add(["new1", "new2"], ["code12 table", "code39 code39 query"])
    assert_same_as_fts5(index)
    index.add(ids[300:320], ["code7"] * 20)  # this connection's own write
    assert_same_as_fts5(index)
    assert_same_as_fts5(other)


def test_an_index_written_before_versions_is_searched_uncached(tmp_path):
    index = LexicalIndex(tmp_path, "c")
    ids, texts = corpus(3, 400)
    index.add(ids, texts)
    db = sqlite3.connect(str(index.path))
    db.execute("DROP TABLE lexical_version")
    db.commit()
    db.close()
    fresh = LexicalIndex(tmp_path, "c")
    assert_same_as_fts5(fresh)
    fresh.add(["x"], ["code1"])  # the next write versions the file again
    assert_same_as_fts5(fresh)


def test_a_file_put_in_the_place_of_another_is_not_read_from_the_cache(tmp_path):
    index = LexicalIndex(tmp_path, "c")
    ids, texts = corpus(4, 300)
    index.add(ids, texts)
    assert_same_as_fts5(index)
    index.close()
    for leftover in tmp_path.glob("ragingest_lexical.sqlite*"):
        leftover.unlink()
    other = LexicalIndex(tmp_path, "c")  # the same number of writes, other rows
    other.add(ids, list(reversed(texts)))
    assert_same_as_fts5(index)


def postings(*rows: int) -> Postings:
    return Postings(np.array(rows, dtype=np.int64), np.ones(len(rows)))


def test_the_cache_holds_one_version_and_its_budget():
    cache = TermCache(budget=5)
    v2, v3, v4 = ("f", 2), ("f", 3), ("f", 4)
    cache.keep_postings(v3, "a", postings(1, 2))
    cache.keep_counts(v3, 10, {"a": 2})
    assert cache.postings(v3, "a") is not None and cache.counts(v3, ["a", "b"]) == {"a": 2}
    cache.keep_postings(v2, "b", postings(1))  # an older snapshot: neither kept nor used
    assert cache.postings(v2, "a") is None and cache.postings(v3, "b") is None
    cache.keep_postings(v3, "c", postings(1, 2, 3))
    cache.postings(v3, "a")  # used last: "c" goes first
    cache.keep_postings(v3, "d", postings(4, 5))
    assert [t for t in "acd" if cache.postings(v3, t) is not None] == ["a", "d"]
    cache.keep_postings(v3, "e", postings(*range(6)))  # larger than the budget: not kept
    assert cache.postings(v3, "e") is None
    assert cache.postings(v4, "a") is None and cache.total(v4) is None  # newer: emptied
    assert cache.counts(v3, ["a"]) == {} and cache.postings(v3, "a") is None
    cache.keep_postings(None, "a", postings(1))
    assert cache.postings(None, "a") is None
    cache.keep_postings(v3, "a", postings(1))
    assert cache.postings(("another file", 1), "a") is None  # a file put in its place
    assert cache.postings(v3, "a") is None


@pytest.mark.parametrize("query", ["", "absentword", "   "])
def test_queries_without_an_indexed_term_find_nothing(tmp_path, query):
    index = LexicalIndex(tmp_path, "c")
    index.add(["a"], ["table code1"])
    assert index.search(query, 5) == []
