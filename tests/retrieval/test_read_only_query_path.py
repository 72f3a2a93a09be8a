"""The read-only query path (``open_reader``: chromadb without langchain_chroma, the alias read
with sqlite3) ranks exactly as the full ``ChunkStore`` does, on the ingested examples/."""

from __future__ import annotations

import pytest

from ragingest.errors import CollectionMismatchError
from ragingest.retrieval.query import search
from ragingest.retrieval.search import rank_chunks
from ragingest.vectorstore.opening import open_reader, open_store
from ragingest.vectorstore.records.aliases import Catalog, resolve_collection
from ragingest.vectorstore.records.location import resolve_in_default_file
from tests.conftest import EXAMPLES
from tests.helpers import ingest_cli

pytestmark = pytest.mark.slow

QUERIES = [
    "На сколько дней выдают альбом с красной наклейкой?",
    "возврат товара надлежащего качества",
    "how do I reset my password",
    "E-07",
    "сколько стоит доставка",
]


@pytest.fixture(scope="module")
def examples_store(tmp_path_factory):
    persist = tmp_path_factory.mktemp("reader") / "chroma_db"
    assert ingest_cli(EXAMPLES, persist, "examples") == 0
    return persist


def _rows(ranking) -> list[tuple]:
    return [
        (h.document.id, h.document.page_content, h.document.metadata, h.score, h.dense_rank,
         h.dense_score, h.lexical_rank, h.lexical_score)
        for h in ranking.hits
    ]  # fmt: skip


@pytest.mark.parametrize("hybrid", [True, False])
def test_reader_ranks_exactly_as_the_full_store(examples_store, hybrid):
    store = open_store(examples_store, "examples", create=False)
    reader = open_reader(examples_store, "examples")
    assert reader.name == store.name and reader.count() == store.count() > 10
    for query in QUERIES:
        for where in (None, {"content_type": "document"}):
            full = rank_chunks(store, query, 20, where=where, hybrid=hybrid)
            fast = rank_chunks(reader, query, 20, where=where, hybrid=hybrid)
            assert _rows(fast) == _rows(full) and len(full.hits) > 0
            assert fast.exhausted == full.exhausted


def test_search_gives_the_full_stores_hits(examples_store):
    store = open_store(examples_store, "examples", create=False)
    for query in QUERIES:
        want = rank_chunks(store, query, 20, hybrid=True).hits[:4]
        got = search(query, examples_store, "examples", k=4)
        assert [(r["id"], r["score"], r["dense_rank"], r["lexical_rank"]) for r in got] == [
            (h.document.id, round(h.score, 4), h.dense_rank, h.lexical_rank) for h in want
        ]


def test_alias_read_with_sqlite_matches_sqlalchemy(tmp_path, monkeypatch):
    monkeypatch.delenv("RAGINGEST_RECORDS_URL", raising=False)
    assert resolve_in_default_file(tmp_path, "examples") == "examples"
    assert not (tmp_path / "ragingest_records.sqlite").exists()  # reading creates nothing
    catalog = Catalog(tmp_path)
    assert resolve_in_default_file(tmp_path, "kb") == "kb-9ffc1b20"  # no row: the mapped name
    building = catalog.start_build("examples")
    assert resolve_in_default_file(tmp_path, "examples") == "examples"  # not live yet
    catalog.swap("examples")
    assert resolve_in_default_file(tmp_path, "examples") == building == "examples__1"
    assert resolve_collection(tmp_path, "examples") == building
    other = "sqlite:///" + str(tmp_path / "other.sqlite")
    assert resolve_in_default_file(tmp_path, "examples", other) is None
    assert resolve_collection(tmp_path, "examples", other) == "examples"


def test_reader_refuses_like_open_store(tmp_path, examples_store):
    with pytest.raises(CollectionMismatchError, match="no such directory"):
        open_reader(tmp_path / "absent", "examples")
    assert not (tmp_path / "absent").exists()
    with pytest.raises(CollectionMismatchError, match="'nothing' does not exist"):
        open_reader(examples_store, "nothing")
