"""``ragingest.retriever``'s contract on a real collection (real model, real Chroma on disk):
exactly k, MMR, where in every form, Document.id = the Chroma id, ainvoke."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import ragingest
from ragingest.retrieval.query import search
from ragingest.vectorstore.ids import stored_id
from ragingest.vectorstore.opening import open_store
from tests.helpers import ingest_cli

pytestmark = pytest.mark.slow

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
TOPICS = {  # one section each: distinct passages
    "Boats": "Rowing boats are rented at the pier by the hour and returned before dark.",
    "Bikes": "Bicycles are rented at the gate by the day and returned with a full check.",
    "Tents": "Tents are rented at the store by the week and returned dry and folded.",
    "Skis": "Skis are rented at the lodge by the day and returned waxed and clean.",
    "Kayaks": "Kayaks are rented at the river dock by the hour with a life vest each.",
}
QUESTION = "Where are boats rented and when are they returned?"


def doc_text(title: str, topics: dict[str, str]) -> str:
    body = "".join(f"## {name}\n{text}\n\n" for name, text in topics.items())
    return f"# {title}\n\n{body}"


@pytest.fixture(scope="module")
def rentals(tmp_path_factory) -> Path:
    docs = tmp_path_factory.mktemp("docs")
    for i in range(4):  # four copies of one file: a plain top k is full of repeats
        (docs / f"copy{i}.md").write_text(doc_text("Rentals", TOPICS), encoding="utf-8")
    (docs / "harbour.md").write_text(
        doc_text("Harbour", {"Fees": "Mooring a boat at the harbour costs ten coins a night."}),
        encoding="utf-8",
    )
    persist = tmp_path_factory.mktemp("chroma")
    opts = ["--model", MINILM, "--chunk-size", "40", "--chunk-overlap", "0"]
    assert ingest_cli(docs, persist, "rentals", *opts, "--min-chunk-size", "0") == 0
    return persist


def distinct_texts(persist: Path) -> set[str]:
    store = open_store(persist, "rentals", create=False)
    return {text.strip() for text in store.get()["documents"]}


def test_exactly_k_when_the_collection_has_k_distinct_passages(rentals):
    distinct = len(distinct_texts(rentals))
    assert distinct == 5 + 1  # the 5 topics of the rentals file (its title with the first), harbour
    for k in (3, 5, distinct):
        docs = ragingest.retriever(rentals, "rentals", k=k, fetch_k=k, parents=False).invoke(
            QUESTION
        )
        assert len(docs) == k
        assert len({d.page_content.strip() for d in docs}) == k  # no copy twice
    more = ragingest.retriever(rentals, "rentals", k=distinct + 5, fetch_k=2, parents=False)
    assert len(more.invoke(QUESTION)) == distinct  # all there is, each once


@pytest.mark.model
def test_mmr_trades_repeats_for_variety(rentals):
    plain = ragingest.retriever(rentals, "rentals", k=3, parents=False, dedup=False, hybrid=False)
    top = plain.invoke(QUESTION)
    assert len({d.page_content for d in top}) == 1  # the same passage from three copies
    mmr = ragingest.retriever(
        rentals, "rentals", k=3, parents=False, dedup=False, search_type="mmr", lambda_mult=0.3,
        hybrid=False,
    )  # fmt: skip
    docs = mmr.invoke(QUESTION)
    assert len(docs) == 3 and docs[0].page_content == top[0].page_content
    assert len({d.page_content for d in docs}) == 3
    relevance_only = ragingest.retriever(
        rentals, "rentals", k=3, parents=False, dedup=False, search_type="mmr", lambda_mult=1.0,
        hybrid=False,
    )  # fmt: skip
    assert [d.id for d in relevance_only.invoke(QUESTION)] == [d.id for d in top]
    fused = ragingest.retriever(rentals, "rentals", k=3, parents=False, search_type="mmr")
    assert len({d.page_content for d in fused.invoke(QUESTION)}) == 3  # MMR, then BM25 fused
    with pytest.raises(ValueError, match="'similarity' or 'mmr'"):
        ragingest.retriever(rentals, "rentals", search_type="nearest")


@pytest.mark.parametrize(
    "where",
    [
        {"source": "copy2.md", "h2": "Tents"},
        {"$and": [{"source": "copy2.md"}, {"h2": {"$eq": "Tents"}}]},
        ["source=copy2.md", "h2=Tents"],
    ],
)
def test_where_in_every_form(rentals, where):
    docs = ragingest.retriever(rentals, "rentals", k=3, where=where, parents=False).invoke(
        QUESTION
    )
    assert [(d.metadata["source"], d.metadata["h2"]) for d in docs] == [("copy2.md", "Tents")]


def test_where_with_numbers_through_the_cli_form(rentals):
    docs = ragingest.retriever(
        rentals, "rentals", k=10, where=["chunk_index>=3", "source=copy0.md"], parents=False
    ).invoke(QUESTION)
    assert sorted(d.metadata["chunk_index"] for d in docs) == [3, 4]


def test_every_returned_document_has_its_chroma_id(rentals):
    store = open_store(rentals, "rentals", create=False)
    for hybrid in (False, True):
        docs = ragingest.retriever(rentals, "rentals", k=4, hybrid=hybrid).invoke(QUESTION)
        assert len(docs) == 4
        for doc in docs:
            (found,) = store.get_by_ids([doc.id])
            assert found.id == doc.id and found.metadata["source"] == doc.metadata["source"]
            assert found.page_content in doc.page_content  # the chunk, inside its parent
            chunks = store.get_by_ids(doc.metadata["chunk_ids"])
            assert {c.id for c in chunks} == set(doc.metadata["chunk_ids"])
            assert doc.metadata["chunk_ids"][0] == doc.id
    for doc, _score in store.similarity_search_with_score(QUESTION, k=3):
        assert [d.id for d in store.get_by_ids([doc.id])] == [doc.id]
    hits = search(QUESTION, rentals, "rentals", k=2)
    assert hits[0]["dense_rank"] >= 1 and hits[0]["cosine"] > 0  # hybrid by default
    ids = [h["id"] for h in hits]
    assert sorted(d.id for d in store.get_by_ids(ids)) == sorted(ids) and len(ids) == 2
    assert "chunk_id" not in hits[0]["metadata"]  # one id scheme: no second, shorter id


def test_a_document_added_by_hand_gets_its_content_id(tmp_path):
    from langchain_core.documents import Document

    store = open_store(tmp_path, "hand", model=MINILM)
    doc = Document(page_content="A note added by an app.", metadata={"source": "app"})
    (added,) = store.add_documents([doc])
    assert added == stored_id(doc) and len(added) == 64
    assert [d.page_content for d in store.get_by_ids([added])] == [doc.page_content]


def test_ainvoke_gives_what_invoke_gives(rentals):
    retriever = ragingest.retriever(rentals, "rentals", k=3, hybrid=True)
    expected = retriever.invoke(QUESTION)
    got = asyncio.run(retriever.ainvoke(QUESTION))
    assert [(d.id, d.page_content) for d in got] == [(d.id, d.page_content) for d in expected]
    assert len(got) == 3


def test_a_retriever_over_an_opened_collection_answers_as_one_opened_by_name(rentals):
    from ragingest.retrieval.heading_first import HeadingFirstRetriever

    store = open_store(rentals, "rentals", create=False)
    given = HeadingFirstRetriever.from_collection(store, k=3, where={"source": "harbour.md"})
    named = ragingest.retriever(rentals, "rentals", k=3, where={"source": "harbour.md"})
    passed = ragingest.retriever(source=store, k=3, where={"source": "harbour.md"})
    assert given.collection == passed.collection == "rentals"
    for question in (QUESTION, "mooring fees"):
        got = [(d.id, d.page_content, d.metadata) for d in given.invoke(question)]
        assert got and got == [(d.id, d.page_content, d.metadata) for d in named.invoke(question)]
        assert got == [(d.id, d.page_content, d.metadata) for d in passed.invoke(question)]
