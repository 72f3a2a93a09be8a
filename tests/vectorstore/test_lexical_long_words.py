"""A word over PostgreSQL's lexeme limit (2047 bytes: a base64 blob, a run of letters) in a
chunk or a query: both lexical backends cut it alike and find it (real PostgreSQL)."""

from __future__ import annotations

import uuid

from ragingest.cli.main import main
from ragingest.vectorstore.lexical.index import LexicalIndex
from ragingest.vectorstore.lexical.pg import PgLexicalIndex
from ragingest.vectorstore.lexical.terms import MAX_TERM_BYTES, terms
from ragingest.vectorstore.records.database import records_engine
from tests.helpers import ingest_cli

BLOB = "QUJD" * 700  # 2800 bytes, one word
CYRILLIC = "ж" * 1500  # 3000 bytes of UTF-8, one word


def test_terms_are_cut_at_the_limit_on_a_character_boundary():
    (blob,) = terms(BLOB)
    assert len(blob.encode()) == MAX_TERM_BYTES and BLOB.lower().startswith(blob)
    (word,) = terms(CYRILLIC)
    assert len(word.encode()) <= MAX_TERM_BYTES and set(word) == {"ж"}


def test_both_backends_take_and_find_an_over_long_word(tmp_path, pg):
    rows = {"a": f"ключ {BLOB} конец", "b": f"слово {CYRILLIC}", "c": "обычный текст ключ"}
    sqlite_index = LexicalIndex(tmp_path, "kb")
    url = pg.create_database("t_" + uuid.uuid4().hex[:12])
    pg_index = PgLexicalIndex(records_engine(None, url), "kb")
    for index in (sqlite_index, pg_index):
        index.add(list(rows), list(rows.values()))
    for query, want in [(BLOB, "a"), (CYRILLIC, "b"), (f"{BLOB} {CYRILLIC}", None)]:
        got = [i for i, _ in pg_index.search(query, 5)]
        assert got == [i for i, _ in sqlite_index.search(query, 5)], query[:20]
        if want:
            assert got == [want]


def test_query_with_an_over_long_word_on_postgres_is_answered(tmp_path, pg, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text(f"# Ключи\n\nКлюч доступа {BLOB} выдают по заявке.\n", "utf-8")
    url = pg.create_database("t_" + uuid.uuid4().hex[:12])
    assert ingest_cli(docs, tmp_path / "db", "kb", "--records-url", url) == 0
    capsys.readouterr()
    store = ["--persist-dir", str(tmp_path / "db"), "--collection", "kb", "--records-url", url]
    assert main(["query", f"ключ {BLOB}", *store, "-k", "1"]) == 0
    assert "Ключ доступа" in capsys.readouterr().out
