"""``ragingest.retriever``: parent expansion, no duplicate text, filters — real model and Chroma."""

from __future__ import annotations

import itertools
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from langchain_core.retrievers import BaseRetriever

import ragingest
from ragingest.cli.main import main
from ragingest.retrieval.retriever import Span, select
from ragingest.retrieval.search import candidate_depth
from ragingest.vectorstore.chroma.store import chroma_client
from ragingest.vectorstore.records.parents import ParentStore
from tests.helpers import ingest_cli

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
FILLER = [
    "The reading room opens at eight in the morning.",
    "Visitors leave their coats in the cloakroom.",
    "Newspapers stay on the rack by the window.",
    "Quiet is kept in every hall of the library.",
]
EVIDENCE = [  # with 40-token chunks and 12 of overlap: [... E1 E2] and [E2 E3 ...]
    "Albums with a red sticker are lent for three days only.",
    "They cannot be renewed.",
    "Any album with a red sticker goes back to the shelf the next morning.",
]
LOANS = "# Library rules\n\n## Loans\n"  # the section's lead: its bare title goes with it
QUESTION = "How long are albums with a red sticker lent, can they be renewed, when do they go back?"


def section_text() -> str:
    return " ".join([*FILLER, *EVIDENCE, *FILLER[:2]])


@pytest.fixture(scope="module")
def ingested(tmp_path_factory) -> tuple[Path, str]:
    docs = tmp_path_factory.mktemp("docs")
    section = section_text()
    (docs / "rules.md").write_text(
        f"# Library rules\n\n## Loans\n{section}\n\n## Food\nNo food is allowed near books.\n",
        encoding="utf-8",
    )
    (docs / "other.md").write_text(
        "# Garden\n\n## Plants\nTomatoes need sun and water every day.\n", encoding="utf-8"
    )
    persist = tmp_path_factory.mktemp("chroma")
    opts = ["--model", MINILM, "--chunk-size", "40", "--chunk-overlap", "12"]
    assert ingest_cli(docs, persist, "rules", *opts, "--min-chunk-size", "0") == 0
    return persist, section


def stored(persist: Path) -> list[tuple[str, dict]]:
    data = chroma_client(persist).get_collection("rules").get(include=["documents", "metadatas"])
    pairs = zip(data["documents"], data["metadatas"], strict=True)
    return sorted(pairs, key=lambda p: (p[1]["source"], p[1]["start_index"]))


@pytest.mark.slow
def test_the_evidence_spans_two_overlapping_chunks(ingested):
    persist, _ = ingested
    loans = [(t, m) for t, m in stored(persist) if m.get("h2") == "Loans"]
    first, middle, last = EVIDENCE
    assert not any(first in t and last in t for t, _ in loans)  # no chunk holds it all
    (a, meta_a), (b, meta_b) = [(t, m) for t, m in loans if middle in t]
    assert first in a and last in b
    assert meta_a["end_index"] > meta_b["start_index"]  # the two chunks overlap
    assert meta_a["parent_id"] == meta_b["parent_id"]  # one parent: the "Loans" section


@pytest.mark.slow
@pytest.mark.model
def test_retriever_returns_the_parent_section_once(ingested):
    persist, section = ingested
    retriever = ragingest.retriever(persist, "rules", k=3)
    assert isinstance(retriever, BaseRetriever)
    docs = retriever.invoke(QUESTION)
    assert docs and docs[0].page_content.endswith(section)
    top = docs[0]
    assert top.page_content == LOANS + section
    assert top.metadata["expanded"] is True and len(top.metadata["chunk_ids"]) >= 2
    assert all(sentence in top.page_content for sentence in EVIDENCE)
    # no text twice: no two returned passages of a file overlap, no passage repeats another
    for i, a in enumerate(docs):
        for b in docs[i + 1 :]:
            same = a.metadata["source"] == b.metadata["source"]
            assert not (same and a.metadata["start_index"] < b.metadata["end_index"]
                        and b.metadata["start_index"] < a.metadata["end_index"])  # fmt: skip
            assert a.page_content not in b.page_content and b.page_content not in a.page_content
    joined = "\n".join(d.page_content for d in docs)
    assert all(joined.count(sentence) == 1 for sentence in EVIDENCE)


@pytest.mark.slow
@pytest.mark.model
def test_without_parents_overlapping_hits_are_merged(ingested):
    persist, section = ingested
    plain = ragingest.retriever(persist, "rules", k=4, parents=False, dedup=False).invoke(QUESTION)
    loans = [d for d in plain if d.metadata.get("h2") == "Loans"]
    assert len(loans) >= 2  # the raw top k repeats the overlapping text
    merged = ragingest.retriever(persist, "rules", k=4, parents=False).invoke(QUESTION)
    loans = [d for d in merged if d.metadata.get("h2") == "Loans"]
    for doc in loans:  # every span is an exact slice of the section, none overlapping
        assert doc.page_content in LOANS + section
    spans = sorted((d.metadata["start_index"], d.metadata["end_index"]) for d in loans)
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))
    joined = "\n".join(d.page_content for d in merged)
    assert all(joined.count(sentence) <= 1 for sentence in EVIDENCE)


@pytest.mark.slow
def test_metadata_filter_and_k(ingested):
    persist, _ = ingested
    docs = ragingest.retriever(persist, "rules", k=1, where=["source=other.md"]).invoke(QUESTION)
    assert len(docs) == 1 and docs[0].metadata["source"] == "other.md"
    docs = ragingest.retriever(persist, "rules", k=2, where={"source": "rules.md"}).invoke(
        "food near books"
    )
    assert {d.metadata["source"] for d in docs} == {"rules.md"}
    assert len(docs) <= 2


@pytest.mark.slow
def test_parents_live_beside_chroma(ingested):
    persist, section = ingested
    meta = next(m for _, m in stored(persist) if m.get("h2") == "Loans")
    store = ParentStore(persist, "rules")
    (parent,) = store.mget([meta["parent_id"]])
    assert parent is not None and parent.page_content == LOANS + section
    assert (parent.metadata["start_index"], parent.metadata["end_index"]) == (
        meta["parent_start"],
        meta["parent_end"],
    )
    assert meta["parent_id"] in set(store.yield_keys())


@pytest.mark.slow
def test_queries_from_many_threads_return_what_sequential_ones_do(ingested):
    persist, _ = ingested
    retriever = ragingest.retriever(persist, "rules", k=3)
    questions = [QUESTION, "food near books", "tomatoes and sun", "coats in the cloakroom"]

    def found(question: str) -> list[tuple]:
        docs = retriever.invoke(question)
        return [
            (d.id, d.metadata["start_index"], d.metadata["end_index"], d.page_content)
            for d in docs
        ]

    want = [found(q) for q in questions]
    with ThreadPoolExecutor(16) as pool:
        got = list(pool.map(found, questions * 8))
    assert got == want * 8 and all(len(w) == 3 for w in want)


def test_select_merges_overlaps_and_drops_copies():
    text = "one two three four five six seven eight nine ten eleven twelve"
    copy = "one two three four five six"  # the same words in another file

    def span(source: str, start: int, end: int, body: str | None = None) -> Span:
        return Span(source, start, end, text[start:end] if body is None else body, {}, 0.0)

    spans = [
        span("d", 0, 27),  # "one … six"
        span("d", 14, 38),  # overlaps the first: merged into [0, 38)
        span("e", 0, 27, copy),  # a copy of the first one's text: dropped
        span("d", 45, 63),  # "ten eleven twelve"
    ]
    chosen = select(spans, k=2)
    assert [(s.source, s.start, s.end, s.text) for s in chosen] == [
        ("d", 0, 38, text[0:38]),
        ("d", 45, 63, text[45:63]),
    ]
    assert [(s.source, s.start) for s in select(spans, k=3, dedup=False)] == [
        ("d", 0),
        ("d", 14),
        ("e", 0),
    ]


def test_candidate_depth_is_max_20_or_four_k():
    assert [candidate_depth(k) for k in (0, 1, 4, 5, 6, 8, 25)] == [20, 20, 20, 20, 24, 32, 100]


@pytest.mark.parametrize("hybrid", [True, False])
def test_cli_query_and_retriever_rank_equally_deep_for_k_8(ingested, monkeypatch, hybrid):
    from ragingest.retrieval import query, retriever

    depths: dict[str, int] = {}

    def recording(name, real):
        def rank(store, text, n, **kwargs):
            depths.setdefault(name, n)  # the first ranking's depth
            return real(store, text, n, **kwargs)

        return rank

    monkeypatch.setattr(query, "rank_chunks", recording("cli", query.rank_chunks))
    monkeypatch.setattr(retriever, "rank_chunks", recording("api", retriever.rank_chunks))
    persist, _ = ingested
    flags = [] if hybrid else ["--no-hybrid"]
    argv = ["query", QUESTION, "--persist-dir", str(persist), "--collection", "rules", "-k", "8"]
    assert main([*argv, "--model", MINILM, *flags]) == 0
    chunks = ragingest.retriever(persist, "rules", k=8, model=MINILM, hybrid=hybrid)
    chunks.invoke(QUESTION)
    assert depths == {"cli": 32, "api": 32}
