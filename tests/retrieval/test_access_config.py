"""The edges of the read API under an access policy (real model, Chroma on disk): a store
opened for principals hands out only guarded side stores, LangChain's per-call
``config["configurable"]`` is honoured or refused (never ignored), principals on a collection
without a policy are refused, and a principal that matches no reader is said."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

import ragingest
from ragingest.cli.main import main
from ragingest.errors import NoAccessPolicyError
from ragingest.pipeline.access_policy import AccessPolicy, AccessRule
from ragingest.vectorstore.access.principals import ALL, Principals
from ragingest.vectorstore.chroma.collection_info import chroma_client
from ragingest.vectorstore.opening import open_store
from ragingest.vectorstore.records.aliases import resolve_collection
from tests.pipeline.test_access_runs import MINILM, write

pytestmark = pytest.mark.slow

QUESTION = "When are salaries paid and when does the office open?"
ANNA = Principals.of(user="anna")  # reads what is public only
POLICY = AccessPolicy((
    AccessRule("hr/**", groups=("hr",)),
    AccessRule("boss/**", users=("boss",)),
    AccessRule("pub/**", public=True),
))  # fmt: skip


@pytest.fixture(scope="module")
def kb(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("data")
    write(root, "hr/pay.md", "Salaries are paid on the fifth of each month")
    write(root, "boss/plan.md", "Salaries will be paid weekly from next year on")
    write(root, "pub/handbook.md", "The office opens at nine and closes at six")
    store = tmp_path_factory.mktemp("store")
    for collection, policy in (("kb", POLICY), ("open", None)):
        ragingest.ingest(root, persist_dir=store, collection=collection, model=MINILM,
                         access_policy=policy, chunk_size=32)  # fmt: skip
    return store


def sources(documents) -> set[str]:
    return {d.metadata["source"] for d in documents}


def test_a_scoped_stores_side_stores_admit_only_what_its_principals_read(kb):
    everything = chroma_client(kb).get_collection(resolve_collection(kb, "kb")).get()
    public = {i for i, m in zip(everything["ids"], everything["metadatas"], strict=True)
              if m["source"] == "pub/handbook.md"}  # fmt: skip
    parents = {m["parent_id"] for m in everything["metadatas"]}
    store = open_store(kb, "kb", model=MINILM, create=False, principals=ANNA)

    assert set(store.get()["ids"]) == public and set(store.chunk_ids()) == public
    assert store.count() == len(public)
    with pytest.raises(PermissionError):  # the raw index (every chunk) is not handed out
        store.index  # noqa: B018
    found = store.parent_store.mget(sorted(parents))
    assert {d.metadata["source"] for d in found if d is not None} == {"pub/handbook.md"}
    hits = store.lexical.search("salaries paid month", 50)
    assert {i for i, _score in hits} <= public
    assert not hasattr(store.parent_store, "mset")  # read-only: a reader writes nothing
    hr = open_store(kb, "kb", model=MINILM, create=False, principals=Principals.of(groups=["hr"]))
    assert {i for i, _ in hr.lexical.search("salaries paid month", 50)} - public


def test_langchains_per_call_config_is_honoured(kb):
    anna = ragingest.retriever(kb, "kb", k=8, parents=False, principals=ANNA)
    assert sources(anna.invoke(QUESTION)) == {"pub/handbook.md"}
    hr = {"configurable": {"principals": ["group:hr"]}}
    assert sources(anna.invoke(QUESTION, config=hr)) == {"hr/pay.md", "pub/handbook.md"}
    boss = {"configurable": {"principals": Principals.of(user="boss")}}
    got = asyncio.run(anna.ainvoke(QUESTION, config=boss))
    assert sources(got) == {"boss/plan.md", "pub/handbook.md"}
    assert sources(anna.invoke(QUESTION)) == {"pub/handbook.md"}  # the call's does not stick

    only = {"configurable": {"principals": ALL, "where": {"source": "boss/plan.md"}, "k": 1}}
    assert [d.metadata["source"] for d in anna.invoke(QUESTION, config=only)] == ["boss/plan.md"]
    hidden = {"configurable": {"search_kwargs": {"filter": {"source": "hr/pay.md"}}}}
    assert anna.invoke(QUESTION, config=hidden) == []  # a call's filter narrows, never widens
    budget = ragingest.retriever(kb, "kb", k=8, max_context_tokens=400, tokenizer=len,
                                 principals=ANNA)  # fmt: skip
    assert "hr/pay.md" in sources(budget.invoke(QUESTION, config=hr))
    assert sources(budget.invoke(QUESTION)) == {"pub/handbook.md"}


@pytest.mark.parametrize("key", ["fetch_k", "search_type", "groups", "user", "filter"])
def test_a_configurable_setting_a_call_cannot_change_is_refused(kb, key):
    anna = ragingest.retriever(kb, "kb", principals=ANNA)
    with pytest.raises(ValueError, match=key):
        anna.invoke(QUESTION, config={"configurable": {key: "x"}})
    with pytest.raises(TypeError, match="configurable"):
        anna.invoke(QUESTION, principals=["group:hr"])
    for other in ({"thread_id": "7"}, {"model": "gpt-4o"}):  # other runnables' keys pass
        assert anna.invoke(QUESTION, config={"configurable": other})


def test_principals_on_a_collection_without_a_policy_are_refused(kb, capsys):
    argv = ["query", QUESTION, "--persist-dir", str(kb), "--collection", "open", "--as", "anna"]
    assert main(argv) == 2
    assert "without an access policy" in capsys.readouterr().err
    with pytest.raises(NoAccessPolicyError, match="without an access policy"):
        ragingest.retriever(kb, "open", principals=ANNA)
    with pytest.raises(NoAccessPolicyError):
        open_store(kb, "open", model=MINILM, create=False, principals=ANNA)
    assert ragingest.retriever(kb, "open", k=1).invoke(QUESTION)  # naming nobody reads it
    assert ragingest.retriever(kb, "open", k=1, principals=ALL).invoke(QUESTION)


def test_a_principal_that_matches_no_reader_is_said(kb, caplog):
    upper = ragingest.retriever(kb, "kb", principals=Principals.of(user="anna", groups=["HR"]))
    assert upper.unmatched_principals() == ["group:HR", "user:anna"]
    assert ragingest.retriever(kb, "kb", principals=["group:hr"]).unmatched_principals() == []
    assert ragingest.retriever(kb, "kb", principals=ALL).unmatched_principals() == []
    caplog.set_level(logging.WARNING)
    argv = ["query", QUESTION, "--persist-dir", str(kb), "--collection", "kb", "--group", "HR"]
    assert main(argv) == 0
    said = [r.getMessage() for r in caplog.records if "group:HR" in r.getMessage()]
    assert said and "case-sensitive" in said[0], caplog.text
