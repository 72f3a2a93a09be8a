"""The context budget and auto-merging: pure functions (a character counter stands in for a
tokenizer), then ``ragingest.retriever(max_context_tokens=..., auto_merge=...)`` on a real
collection."""

from __future__ import annotations

import shutil

import pytest
from langchain_core.documents import Document

import ragingest
from ragingest.cli.main import main
from ragingest.retrieval.context import auto_merge, fit_budget, token_counter
from tests.conftest import memo_path


def chunk(cid: str, start: int, end: int, parent: str = "p1", text: str | None = None) -> Document:
    meta = {"doc_id": "d", "start_index": start, "end_index": end, "parent_id": parent,
            "parent_start": 0, "parent_end": 100, "chunk_ids": [cid]}
    return Document(page_content=text or "x" * (end - start), metadata=meta)


def test_fit_budget_keeps_whole_passages_best_first_and_skips_what_does_not_fit():
    passages = [chunk("a", 0, 40), chunk("b", 40, 100), chunk("c", 100, 120)]
    context = fit_budget(passages, 65, len)
    assert [d.metadata["chunk_ids"] for d in context.documents] == [["a"], ["c"]]
    assert context.tokens == 60
    assert [d.metadata["chunk_ids"] for d in context.skipped] == [["b"]]
    assert fit_budget(passages, None, len).tokens == 120


def test_auto_merge_returns_the_parent_when_enough_of_its_chunks_are_hits():
    parent = Document(page_content="P" * 100)
    hits = [chunk("a", 0, 30), chunk("z", 200, 230, parent="p2"), chunk("b", 60, 90)]
    merged = auto_merge(hits, lambda keys: [parent for _ in keys], lambda key: 4, 0.5)
    assert [(d.metadata["start_index"], d.metadata["end_index"]) for d in merged] == [
        (0, 100), (200, 230)
    ]
    assert merged[0].metadata["chunk_ids"] == ["a", "b"]
    assert merged[0].metadata["merged"] is True
    # one hit of four is not enough: the chunks stay as they were
    kept = auto_merge(hits, lambda keys: [parent for _ in keys], lambda key: 5, 0.5)
    assert [d.metadata["chunk_ids"] for d in kept] == [["a"], ["z"], ["b"]]


def test_token_counter_refuses_an_unknown_tokenizer_with_the_choices():
    with pytest.raises(ValueError, match=r"tokenizer\.json path"):
        token_counter("no/such/tokenizer")
    assert token_counter(len)("abc") == 3


@pytest.fixture(scope="module")
def memo_db(tmp_path_factory):
    root = tmp_path_factory.mktemp("context")
    (root / "src").mkdir()
    shutil.copy(memo_path(), root / "src" / "library_memo.md")
    args = ["ingest", str(root / "src"), "--persist-dir", str(root / "db"), "--collection",
            "memo", "--no-progress", "--chunk-size", "40", "--min-chunk-size", "10"]
    assert main(args) == 0
    return root / "db"


def test_retriever_with_a_budget_stays_within_it_in_model_tokens(memo_db, e5_info):
    count = token_counter()
    found = ragingest.retriever(
        memo_db, "memo", k=4, parents=False, hybrid=False, max_context_tokens=60
    )
    docs = found.invoke("На сколько дней выдают альбом с красной наклейкой?")
    assert docs, "the best chunk fits the budget"
    assert sum(count(d.page_content) for d in docs) <= 60
    assert "три дня" in docs[0].page_content


def test_retriever_auto_merge_gives_the_section_when_its_chunks_are_hit(memo_db):
    query = "Альбомы с красной наклейкой: срок выдачи и продление"
    chunks = ragingest.retriever(memo_db, "memo", k=4, parents=False).invoke(query)
    assert [(d.metadata["start_index"], d.metadata["end_index"]) for d in chunks] == [
        (125, 189), (190, 321), (66, 124), (322, 429)
    ]
    merged = ragingest.retriever(memo_db, "memo", k=4, auto_merge=0.5).invoke(query)
    # two of the three chunks of «Выдача книг» were hits: the section takes the best one's rank
    assert [(d.metadata["start_index"], d.metadata["end_index"]) for d in merged] == [
        (0, 189), (190, 321), (322, 429)
    ]
    assert merged[0].metadata["merged"] is True
    assert merged[0].page_content.startswith("## Выдача книг\n")
