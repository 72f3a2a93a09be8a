"""The backend registry and what Chroma offers through it (``vectorstore.backends``,
``port``): the lifecycle of an embedded directory's collections, its upkeep, its server
options and files, and the choice of a kind for a block of code. No model is loaded."""

from __future__ import annotations

import argparse

import pytest

from ragingest.vectorstore import backends
from ragingest.vectorstore.port import Backend, StoreUpkeep, upkeep_of


def test_chroma_backend_lifecycle_renames_in_place(tmp_path):
    store = backends.open_backend(tmp_path, kind="chroma")
    assert isinstance(store, Backend) and not store.remote
    index = store.create("docs__1", {"ragingest_model": "m"})
    index.add(["a", "b"], [[1.0, 0.0], [0.0, 1.0]], ["x", "y"], [{"n": 1}, {"n": 2}])
    assert store.names() == {"docs__1"}
    assert store.metadata("docs__1")["ragingest_model"] == "m"
    assert store.metadata("docs") is None
    store.rename("docs__1", "docs")
    assert store.names() == {"docs"}
    assert index.count() == 2  # the open index still reads it
    assert [c.id for c in store.open("docs").get()] == ["a", "b"]
    store.drop("docs")
    store.drop("docs")  # gone already: no error
    assert store.names() == set()
    with pytest.raises(KeyError, match="docs"):
        store.open("docs")


def test_an_embedded_chroma_directory_has_upkeep(tmp_path):
    upkeep = upkeep_of(backends.open_backend(tmp_path))
    assert isinstance(upkeep, StoreUpkeep)
    assert upkeep.begin() is False  # journaled now: nothing owed before
    assert upkeep.begin() is True  # a run stopped before ``settle`` leaves it owed
    upkeep.settle(["a file could not be vacuumed"])
    assert upkeep.begin() is True
    upkeep.settle([])
    assert upkeep.begin() is False


def test_chroma_offers_its_server_options_and_files_by_name():
    options = backends.server_options("chroma")
    assert options is not None
    parser = argparse.ArgumentParser()
    options.add_arguments(parser)
    args = parser.parse_args(["--chroma-host", "127.0.0.1", "--chroma-port", "9"])
    server = options.from_args(args)
    assert str(server) == "http://127.0.0.1:9"
    assert options.from_args(parser.parse_args([])) is None
    with options.use(server):
        assert options.active() is server
    assert options.active() is None
    files = backends.store_files("chroma")
    assert files is not None and files.main_file == "chroma.sqlite3"


def plain(persist_dir, server=None):
    """A kind registered by a plain function: no server options, no files, no upkeep."""
    return backends.open_backend(persist_dir, server, kind="chroma")


def test_use_backend_chooses_the_kind_and_refuses_an_unknown_one(monkeypatch):
    monkeypatch.setitem(backends.BUILT_IN, "plain", f"{__name__}:plain")
    assert backends.active_kind() == backends.DEFAULT == "chroma"
    with backends.use_backend("plain"):
        assert backends.active_kind() == "plain"
        assert backends.active_kind("chroma") == "chroma"  # named: wins
        assert backends.server_options() is None and backends.store_files() is None
    assert backends.active_kind() == "chroma"
    with pytest.raises(ValueError, match="known backends are chroma, memory, plain"):
        backends.use_backend("nope").__enter__()
