"""The store seam's contract (``vectorstore.seam``), one suite for every implementation: the
Chroma store (``open_store``, embedded on disk), its read-only reader (``CollectionReads``) and a
``Collection`` over the exact in-memory index (``MemoryIndex``). Deterministic vectors (hashed
words), so the nearest order and the distances are exact numbers computed here with numpy."""

from __future__ import annotations

import numpy as np
import pytest
from langchain_core.documents import Document

from ragingest.vectorstore.backends import open_backend
from ragingest.vectorstore.collection_reads import CollectionReads
from ragingest.vectorstore.opening import open_store
from ragingest.vectorstore.seam import (
    AllOf,
    AnyOf,
    ChunkSink,
    ChunkSource,
    Condition,
    matches,
    parse_filter,
)
from tests.fake_embeddings import HashedWordEmbeddings
from tests.in_memory import memory_collection

WORDS = "alpha beta gamma delta omega sigma kappa lambda theta zeta".split()


class NamedEmbeddings(HashedWordEmbeddings):
    model_name = "hashed-words"
    fingerprint = "hashed-words-64"


def _documents() -> list[Document]:
    rng = np.random.default_rng(3)
    docs = []
    for i in range(12):
        meta = {"source": f"f{i % 3}.md", "chunk_index": i, "parent_id": f"p{i // 4}"}
        meta |= {"parent_start": 0, "parent_end": 10}
        if i % 2:
            meta["lang"] = "ru"
        if i == 5:
            meta["draft"] = True
        text = " ".join(rng.choice(WORDS, 4)) + f" unique{i}"
        docs.append(Document(page_content=text, metadata=meta, id=f"c{i:02d}"))
    return docs


FILTERS = [
    None,
    {"source": "f1.md"},
    {"chunk_index": {"$gte": 6}},
    {"chunk_index": {"$lt": 3}},
    {"lang": {"$ne": "ru"}},  # a chunk without the key passes $ne
    {"source": {"$in": ["f0.md", "f2.md"]}},
    {"source": {"$nin": ["f0.md"]}},
    {"$and": [{"source": "f0.md"}, {"chunk_index": {"$gt": 2}}]},
    {"$or": [{"lang": "ru"}, {"chunk_index": {"$lte": 1}}]},
    {"source": "f1.md", "lang": "ru"},  # several keys: all of them
    {"draft": True},
    {"chunk_index": True},  # a bool is not the number 1
    {"source": "nowhere.md"},
]


@pytest.fixture(params=["chroma", "reader", "memory"])
def source(request, tmp_path):
    embeddings = NamedEmbeddings(dimensions=64)
    docs = _documents()
    if request.param == "memory":
        memory = memory_collection(embeddings)
        memory.add_documents(docs, parent_texts=[d.page_content for d in docs])
        return memory
    chroma = open_store(tmp_path, "contract", embeddings)
    chroma.add_documents(docs, parent_texts=[d.page_content for d in docs])
    if request.param == "chroma":
        return chroma
    # the reader ``open_reader`` returns, over the fake model (it would load the recorded one)
    return CollectionReads(
        open_backend(tmp_path).open(chroma.name), embeddings, lexical=chroma.lexical,
        parents=chroma.parent_store,
    )  # fmt: skip


def _expected_nearest(vector, where, n):
    embeddings = NamedEmbeddings(dimensions=64)
    rows = []
    for doc in _documents():
        if not matches(parse_filter(where), doc.metadata):
            continue
        row = np.asarray(embeddings.embed_query(doc.page_content))
        q = np.asarray(vector)
        cosine = float(q @ row / (np.linalg.norm(q) * np.linalg.norm(row)))
        rows.append((str(doc.id), 1.0 - cosine))
    return sorted(rows, key=lambda r: r[1])[:n]


def test_it_is_a_chunk_source(source):
    assert isinstance(source, ChunkSource)
    assert source.count() == 12 and source.remote is False
    assert source.lexical_in_step()


@pytest.mark.parametrize("where", FILTERS)
def test_every_read_obeys_one_filter(source, where):
    flt = parse_filter(where)
    want = {str(d.id) for d in _documents() if matches(flt, d.metadata)}
    assert set(source.chunk_ids(flt)) == want
    assert source.held([f"c{i:02d}" for i in range(0, 12, 2)] + ["absent"], flt) == {
        i for i in want if int(i[1:]) % 2 == 0
    }
    got = source.chunks(["c00", "c05", "c11", "absent"], flt)
    assert {c.id for c in got} == want & {"c00", "c05", "c11"}
    vector = source.embed_query("alpha gamma unique5")
    nearest = source.nearest(vector, 5, flt)
    expected = _expected_nearest(vector, where, 12)
    exact = dict(expected)
    assert np.allclose([d for _, d in nearest], [d for _, d in expected[:5]], atol=1e-5)
    assert all(abs(exact[i] - d) < 1e-5 for i, d in nearest)  # ties in any order
    assert [d for _, d in nearest] == sorted(d for _, d in nearest)
    chunks = source.nearest_chunks(vector, 5, flt)
    assert [(c.id, round(d, 5)) for c, d in chunks] == [(i, round(d, 5)) for i, d in nearest]


def test_rows_are_typed_and_round_trip(source):
    by_id = {str(d.id): d for d in _documents()}
    for chunk in source.chunks():
        doc = by_id[chunk.id]
        assert chunk.text == doc.page_content and chunk.metadata == doc.metadata
        assert chunk.document() == Document(
            page_content=doc.page_content, metadata=doc.metadata, id=chunk.id
        )
    vectors = source.vectors(["c03", "c07"])
    want = NamedEmbeddings(dimensions=64).embed_query(by_id["c03"].page_content)
    assert set(vectors) == {"c03", "c07"} and np.allclose(vectors["c03"], want, atol=1e-6)
    assert source.parent_store is not None
    assert source.parent_store.mget(["p1"])[0] is not None


def test_a_sink_deletes_from_every_read(source):
    if not isinstance(source, ChunkSink) or not hasattr(source, "add_documents"):
        pytest.skip("the reader writes nothing")
    source.delete(["c00", "c01"])
    assert source.count() == 10 and "c00" not in source.chunk_ids()
    vector = source.embed_query(_documents()[0].page_content)
    assert "c00" not in [i for i, _ in source.nearest(vector, 12)]
    assert source.held(["c00", "c02"]) == {"c02"}


def test_a_filter_in_the_users_syntax_is_read_once_and_exactly():
    assert parse_filter({}) is None and parse_filter(None) is None
    assert parse_filter({"a": 1}) == Condition("a", "$eq", 1)
    assert parse_filter({"a": 1, "b": {"$in": [1, 2]}}) == AllOf(
        (Condition("a", "$eq", 1), Condition("b", "$in", (1, 2)))
    )
    assert parse_filter({"$or": [{"a": 1}, {"b": 2}]}) == AnyOf(
        (Condition("a", "$eq", 1), Condition("b", "$eq", 2))
    )
    with pytest.raises(ValueError, match=r"unknown operator '\$like'"):
        parse_filter({"a": {"$like": "x"}})
    with pytest.raises(ValueError, match=r"\$in takes a list"):
        parse_filter({"a": {"$in": 3}})


def test_an_operator_that_does_not_test_a_schema_keys_type_is_refused_by_name(source):
    """Chroma answers ``$contains`` on a string, ``$eq`` on a list and ``$gt`` on a bool with no
    chunks (``$ne`` on a list: every chunk), never an error; the filter is refused instead,
    naming the key, the operator and what to use. Keys outside the schema are not checked."""
    refused = {
        "source": ("$contains", "f0.md", r"it holds one str value .* use \$eq"),
        "section_paths": ("$eq", "A", r"it holds a list, which \$eq .*'\$contains'"),
        "access": ("$ne", "group:hr", r"it holds a list, which \$ne"),
        "oversized": ("$gt", 0, r"it holds a bool and \$gt compares numbers"),
        "title": ("$lte", 5, r"it holds a str and \$lte compares numbers"),
    }
    for key, (op, value, message) in refused.items():
        with pytest.raises(ValueError, match=f"bad filter on '{key}': {message}"):
            parse_filter({key: {op: value}})
    assert parse_filter({"source": {"$in": ["f0.md"]}}) == Condition("source", "$in", ("f0.md",))
    assert parse_filter({"chunk_index": {"$gt": 9}}) == Condition("chunk_index", "$gt", 9)
    assert parse_filter({"tags": {"$contains": "x"}}) == Condition("tags", "$contains", "x")
    assert source.chunk_ids(parse_filter({"chunk_index": {"$gt": 9}})) == ["c10", "c11"]


def test_a_sink_sets_readers_in_place_on_chunks_and_parents(source):
    """``set_access`` replaces a document's readers on its chunks and parent sections, keeps
    their text, vectors and other keys, and the ``$contains`` filter reads the new list."""
    if not isinstance(source, ChunkSink):
        pytest.skip("the reader writes nothing")
    assert isinstance(source, ChunkSink)
    ids = ["c04", "c05", "c06", "c07"]  # parent p1, whole
    before = {c.id: c for c in source.chunks(ids)}
    vectors = source.vectors(ids)
    source.set_access(ids, ["group:hr", "user:ann", "group:hr"])
    has_hr = parse_filter({"access": {"$contains": "group:hr"}})
    assert set(source.chunk_ids(has_hr)) == set(ids)
    for chunk in source.chunks(ids):
        old = before[chunk.id]
        assert chunk.metadata == {**old.metadata, "access": ["group:hr", "user:ann"]}
        assert chunk.text == old.text
    assert all(np.allclose(source.vectors(ids)[i], vectors[i]) for i in ids)
    assert source.parent_store.mget(["p1"])[0].metadata["access"] == ["group:hr", "user:ann"]
    source.set_access(ids, ["user:bob"])  # a revocation: the old readers are gone everywhere
    assert source.chunk_ids(has_hr) == []
    assert source.parent_store.mget(["p1"])[0].metadata["access"] == ["user:bob"]
    assert "access" not in source.parent_store.mget(["p0"])[0].metadata
    assert source.count() == 12
