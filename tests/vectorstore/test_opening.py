"""``opening.open_store`` / ``open_reader``: a ``Collection`` from a ``port.Backend`` given as
an object or by its registered name; the refusals of a missing store and a missing collection,
creating nothing; and a collection opened for principals given to a retriever is refused
(its reads are guarded already; the retriever takes the principals)."""

from __future__ import annotations

import pytest

from ragingest.errors import CollectionMismatchError
from ragingest.retrieval.heading_first import HeadingFirstRetriever
from ragingest.vectorstore.access.principals import ALL
from ragingest.vectorstore.backends import open_backend
from ragingest.vectorstore.collection import Collection
from ragingest.vectorstore.opening import open_store
from tests.vectorstore.test_store_contract import NamedEmbeddings, _documents


def test_a_backend_given_or_named_opens_the_same_collection(tmp_path):
    store = open_store(tmp_path, "kb", NamedEmbeddings(dimensions=64), backend="chroma")
    docs = _documents()
    store.add_documents(docs, parent_texts=[d.page_content for d in docs])
    again = open_store(
        tmp_path, "kb", NamedEmbeddings(dimensions=64), create=False,
        backend=open_backend(tmp_path, kind="chroma"),
    )  # fmt: skip
    assert isinstance(again, Collection)
    assert again.name == store.name == "kb-9ffc1b20"  # the backend's name for a short one
    assert again.ids() == store.ids() and again.count() == 12
    assert again.parent_store is not None and again.parent_store.mget(["p1"])[0] is not None
    with pytest.raises(ValueError, match="no store backend 'nowhere': known backends are chroma"):
        open_store(tmp_path, "kb", NamedEmbeddings(dimensions=64), backend="nowhere")


def test_a_missing_store_or_collection_is_refused_creating_nothing(tmp_path):
    with pytest.raises(CollectionMismatchError, match="no such directory"):
        open_store(tmp_path / "none", "kb", NamedEmbeddings(dimensions=64), create=False)
    assert not (tmp_path / "none").exists()
    open_store(tmp_path, "kb", NamedEmbeddings(dimensions=64))
    with pytest.raises(CollectionMismatchError, match="'other' does not exist"):
        open_store(tmp_path, "other", NamedEmbeddings(dimensions=64), create=False)


def test_a_retriever_refuses_a_collection_opened_for_principals(tmp_path):
    open_store(tmp_path, "kb", NamedEmbeddings(dimensions=64)).add_documents(_documents())
    scoped = open_store(tmp_path, "kb", NamedEmbeddings(dimensions=64), principals=ALL)
    with pytest.raises(ValueError, match="opened without principals"):
        HeadingFirstRetriever.from_collection(scoped, k=2)
