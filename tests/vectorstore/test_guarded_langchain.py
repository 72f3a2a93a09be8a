"""``open_store(..., principals=...)``: the collection's LangChain ``VectorStore`` methods (the
ones the README shows) read only what the principals may read, through the one guard
(``access.guarded.GuardedSource``); without principals a policy collection's LangChain reads
are refused, while the writer's reads (the seam's) still see every chunk."""

from __future__ import annotations

import pytest

from ragingest.errors import PrincipalsRequiredError
from ragingest.vectorstore.access.principals import ALL, Principals, access_filter
from ragingest.vectorstore.opening import open_store
from ragingest.vectorstore.seam import matches
from tests.vectorstore.test_store_contract import NamedEmbeddings
from tests.vectorstore.test_store_contract_access import _with_readers, mark_policy


@pytest.fixture
def policy_dir(tmp_path):
    docs = _with_readers()
    store = open_store(tmp_path, "kb", NamedEmbeddings(dimensions=64))
    store.add_documents(docs, parent_texts=[d.page_content for d in docs])
    mark_policy(store.index.collection)
    return tmp_path


def _langchain_reads(store) -> dict[str, set[str]]:
    every = [f"c{i:02d}" for i in range(12)]
    query = "alpha beta gamma delta"
    return {
        "similarity_search": {d.id for d in store.similarity_search(query, k=12)},
        "with_score": {d.id for d, _ in store.similarity_search_with_score(query, k=12)},
        "mmr": {d.id for d in store.max_marginal_relevance_search(query, k=12, fetch_k=12)},
        "as_retriever": {d.id for d in store.as_retriever(search_kwargs={"k": 12}).invoke(query)},
        "get": set(store.get()["ids"]),
        "get_where": set(store.get(where={"chunk_index": {"$gte": 0}})["ids"]),
        "get_by_ids": {d.id for d in store.get_by_ids(every)},
        "seam": set(store.chunk_ids()),
    }


@pytest.mark.parametrize("who", [Principals.of(user="ann"), Principals.of(groups=["hr"])])
def test_langchain_methods_read_only_what_the_principals_may(policy_dir, who):
    store = open_store(policy_dir, "kb", NamedEmbeddings(dimensions=64), create=False,
                       principals=who)  # fmt: skip
    admit = access_filter(who, True)
    want = {str(d.id) for d in _with_readers() if matches(admit, d.metadata)}
    assert want and len(want) < 12
    for name, got in _langchain_reads(store).items():
        assert got == want, name
    assert store.count() == len(want)


def test_without_principals_langchain_refuses_and_the_writer_reads_all(policy_dir):
    store = open_store(policy_dir, "kb", NamedEmbeddings(dimensions=64), create=False)
    reads = [
        lambda: store.similarity_search("alpha"),
        lambda: store.get(),
        lambda: store.get_by_ids(["c00"]),
        lambda: store.as_retriever().invoke("alpha"),
        lambda: store.max_marginal_relevance_search("alpha"),
    ]
    for read in reads:
        with pytest.raises(PrincipalsRequiredError):
            read()
    assert store.count() == 12 and len(store.ids()) == 12  # the writer's upkeep
    everything = open_store(policy_dir, "kb", NamedEmbeddings(dimensions=64), principals=ALL)
    assert all(len(ids) == 12 for ids in _langchain_reads(everything).values())
