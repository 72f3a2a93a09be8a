"""``collection.Collection`` over the port (``ChromaIndex`` here, built through the backend as
any backend is): its writes keep the side stores in step with the index, its upkeep repairs
them, and its LangChain reads are ``langchain_chroma``'s. Deterministic vectors (hashed words),
so orders are exact."""

from __future__ import annotations

import numpy as np
import pytest
from langchain_core.documents import Document
from langchain_core.stores import InMemoryBaseStore

from ragingest.errors import PrincipalsRequiredError
from ragingest.vectorstore.access.principals import ALL, Principals
from ragingest.vectorstore.collection import Collection
from ragingest.vectorstore.collection_reads import CollectionReads
from ragingest.vectorstore.identity import ACCESS_POLICY_KEY
from ragingest.vectorstore.lexical.index import LexicalIndex
from ragingest.vectorstore.port import DenseIndex
from ragingest.vectorstore.seam import ChunkSink, ChunkSource, Condition
from tests.vectorstore.test_store_contract import NamedEmbeddings, _documents


def _index(tmp_path, name: str = "kbase", metadata: dict | None = None) -> DenseIndex:
    from ragingest.vectorstore.backends import open_backend

    return open_backend(tmp_path, kind="chroma").create(name, metadata or {"m": "x"})


def _collection(tmp_path, **kwargs) -> Collection:
    return Collection(
        _index(tmp_path, metadata=kwargs.pop("metadata", None)),
        NamedEmbeddings(dimensions=64),
        lexical=LexicalIndex(tmp_path, "kbase"),
        parents=InMemoryBaseStore(),
        **kwargs,
    )


@pytest.fixture
def filled(tmp_path) -> Collection:
    store = _collection(tmp_path)
    docs = _documents()
    store.add_documents(docs, parent_texts=[f"parent of {d.id}" for d in docs])
    return store


def test_it_is_the_seam_and_a_langchain_store(filled):
    assert isinstance(filled, ChunkSource) and isinstance(filled, ChunkSink)
    assert filled.count() == 12 and filled.ids() == [f"c{i:02d}" for i in range(12)]
    assert filled.lexical_in_step() and filled.name == "kbase"
    assert isinstance(filled.index, DenseIndex)


def test_writes_journal_first_keep_no_underscore_keys_and_cache_given_vectors(tmp_path):
    store = _collection(tmp_path)
    calls: list[tuple[list[str], str, int]] = []
    store.journal = lambda ids, op: calls.append((ids, op, store.index.count()))
    stored_vectors: list = []
    store._source.embeddings.store_vectors = stored_vectors.extend  # type: ignore[union-attr]
    doc = Document(page_content="alpha beta", metadata={"source": "a.md", "_hint": 1})
    given = [0.5] * 64
    (first,) = store.add_documents([doc], vectors=[given])
    assert calls == [([first], "add", 0)]  # journaled before the index was written
    assert stored_vectors == [("alpha beta", given)]
    (chunk,) = store.chunks([first])
    assert chunk.metadata == {"source": "a.md"} and chunk.text == "alpha beta"
    assert np.allclose(store.vectors([first])[first], given)
    store.delete([first])
    assert calls[-1] == ([first], "delete", 1) and store.count() == 0
    store.add_documents([doc])
    store.delete([first], journal=False)
    assert [op for _, op, _ in calls] == ["add", "delete", "add"]


def test_delete_drops_parents_no_chunk_refers_to(filled):
    parents = filled.parent_store
    filled.delete(["c00", "c01", "c02"])  # p0 still has c03
    assert parents.mget(["p0"])[0] is not None
    filled.delete(where={"chunk_index": {"$lte": 3}})
    assert parents.mget(["p0"]) == [None] and parents.mget(["p1"])[0] is not None
    assert filled.count() == 8 and filled.lexical.count() == 8


def test_sync_lexical_and_prune_parents_repair_the_side_stores(filled, tmp_path):
    lexical = LexicalIndex(tmp_path, "kbase")
    lexical.delete(["c03", "c04"])
    lexical.add(["ghost"], ["ghost text"])
    assert not filled.lexical_in_step() or lexical.ids() != set(filled.ids())
    assert filled.sync_lexical() == 3
    assert lexical.ids() == set(filled.ids())
    filled.parent_store.mset([("orphan", Document(page_content="x"))])
    assert filled.prune_parents() == 1
    assert sorted(filled.parent_store.yield_keys()) == ["p0", "p1", "p2"]


def test_the_first_write_brings_a_lexical_index_left_apart_in_step(filled, tmp_path):
    reopened = Collection(
        filled.index, NamedEmbeddings(dimensions=64), lexical=LexicalIndex(tmp_path, "kbase")
    )
    LexicalIndex(tmp_path, "kbase").delete(["c05"])
    reopened.delete(["c00"])
    assert LexicalIndex(tmp_path, "kbase").ids() == set(reopened.ids()) and reopened.count() == 11


def test_set_access_replaces_readers_only(filled):
    before = {c.id: c for c in filled.chunks(["c04", "c05"])}
    filled.set_access(["c04", "c05"], ["user:b", "user:a", "user:b"])
    for chunk in filled.chunks(["c04", "c05"]):
        assert chunk.metadata == {**before[chunk.id].metadata, "access": ["user:a", "user:b"]}
    assert filled.parent_store.mget(["p1"])[0].metadata["access"] == ["user:a", "user:b"]
    assert filled.chunk_ids(Condition("access", "$contains", "user:a")) == ["c04", "c05"]


def test_langchain_reads_are_langchain_chromas(filled):
    query = "alpha gamma unique5"
    scored = filled.similarity_search_with_score(query, k=3)
    nearest = filled.nearest(filled.embed_query(query), 3)
    assert [(d.id, round(s, 6)) for d, s in scored] == [(i, round(s, 6)) for i, s in nearest]
    assert [d.id for d in filled.similarity_search(query, k=3)] == [i for i, _ in nearest]
    relevance = filled.similarity_search_with_relevance_scores(query, k=3)
    assert [round(r, 6) for _, r in relevance] == [round(1 - s, 6) for _, s in nearest]
    only = filled.similarity_search(query, k=12, filter={"source": "f1.md"})
    assert {d.metadata["source"] for d in only} == {"f1.md"} and len(only) == 4
    mmr = filled.max_marginal_relevance_search(query, k=4, fetch_k=12)
    assert len(mmr) == 4 and mmr[0].id == nearest[0][0]
    assert [d.id for d in filled.as_retriever(search_kwargs={"k": 2}).invoke(query)] == [
        d.id for d in filled.similarity_search(query, k=2)
    ]
    assert sorted(d.id for d in filled.get_by_ids(["c03", "c01", "nope"])) == ["c01", "c03"]
    got = filled.get(where={"chunk_index": {"$gte": 10}})
    assert got["ids"] == ["c10", "c11"] and got["metadatas"][0]["chunk_index"] == 10
    with pytest.raises(TypeError, match="where_document"):
        filled.similarity_search(query, where_document={"$contains": "x"})


def test_add_texts_goes_through_add_documents(tmp_path):
    store = _collection(tmp_path)
    ids = store.add_texts(["alpha", "beta"], [{"source": "a"}, {"source": "b"}])
    assert store.count() == 2 and store.lexical.count() == 2 and sorted(store.ids()) == sorted(ids)


def test_a_policy_collection_guards_langchain_reads_and_hides_its_raw_parts(tmp_path):
    store = _collection(tmp_path, metadata={ACCESS_POLICY_KEY: True})
    docs = _documents()
    for i, doc in enumerate(docs):
        doc.metadata["access"] = ["user:ann"] if i < 3 else ["group:hr"]
    store.add_documents(docs, parent_texts=[d.page_content for d in docs])
    with pytest.raises(PrincipalsRequiredError):
        store.similarity_search("alpha")
    assert store.count() == 12  # the writer's reads see every chunk
    ann = Collection(
        store.index, NamedEmbeddings(dimensions=64), lexical=LexicalIndex(tmp_path, "kbase"),
        parents=store.parent_store, principals=Principals.of(user="ann"),
    )  # fmt: skip
    assert ann.count() == 3 and sorted(ann.ids()) == ["c00", "c01", "c02"]
    assert {d.id for d in ann.similarity_search("alpha beta", k=12)} == {"c00", "c01", "c02"}
    assert {i for i, _ in ann.lexical.search("unique7 unique1", 10)} == {"c01"}
    assert ann.parent_store.mget(["p1"]) == [None]
    with pytest.raises(PermissionError):
        ann.index  # noqa: B018
    everyone = Collection(store.index, NamedEmbeddings(dimensions=64), principals=ALL)
    assert len(everyone.similarity_search("alpha", k=12)) == 12


def test_the_readers_collection_has_reads_alone(filled):
    reader = CollectionReads(filled.index, NamedEmbeddings(dimensions=64))
    assert isinstance(reader, ChunkSource) and not isinstance(reader, ChunkSink)
    assert reader.count() == 12 and not hasattr(reader, "similarity_search")
