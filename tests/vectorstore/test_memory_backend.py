"""What the in-memory backend adds to the port contract (``test_port_contract`` holds it to the
rest): its order (insertion; an upsert moves a row to the end; ties by that order), one place
per directory for the whole process, and its registration as a third party's would be. Exact
values over deterministic test vectors (fixed numbers)."""

from __future__ import annotations

import pytest

from ragingest.vectorstore import backends
from ragingest.vectorstore.memory.backend import MemoryBackend, open_memory
from ragingest.vectorstore.memory.index import MemoryIndex


def test_it_is_registered_by_one_entry_and_opened_through_the_registry(tmp_path):
    assert backends.BUILT_IN["memory"] == "ragingest.vectorstore.memory.backend:open_memory"
    assert "memory" in backends.backend_names()
    opened = backends.open_backend(tmp_path, kind="memory")
    assert isinstance(opened, MemoryBackend) and opened is open_memory(tmp_path)


def test_one_place_per_directory_for_the_whole_process(tmp_path):
    first = open_memory(tmp_path / "a")
    first.create("kb", {"m": 1}).add(["x"], [[1.0, 0.0]], ["x"], [{}])
    again = open_memory(str(tmp_path / "a" / ".." / "a"))  # the same directory, spelled otherwise
    assert again is first and again.open("kb").ids() == ["x"]
    assert open_memory(tmp_path / "b").names() == set()
    assert not (tmp_path / "a").exists()  # nothing is written: nothing persists


def test_a_server_is_refused_by_name(tmp_path):
    with pytest.raises(ValueError, match=r"memory backend .* takes no server"):
        open_memory(tmp_path, server=object())


def test_order_is_insertion_and_an_upsert_moves_to_the_end():
    index = MemoryBackend().create("kb", {})
    index.add(["a", "b", "c"], [[1.0, 0.0]] * 3, ["a", "b", "c"], [{}] * 3)
    index.add(["a"], [[1.0, 0.0]], ["a2"], [{}])
    assert index.ids() == ["b", "c", "a"]
    assert [c.id for c in index.get(["a", "c", "b"])] == ["b", "c", "a"]
    index.update_metadata(["b"], [{"k": 1}])  # in place: keeps its place
    assert index.ids() == ["b", "c", "a"]


def test_exact_cosine_with_ties_in_insertion_order():
    index = MemoryBackend().create("kb", {})
    assert isinstance(index, MemoryIndex)
    rows = {"far": [0.0, 1.0], "tie1": [2.0, 0.0], "zero": [0.0, 0.0], "tie2": [0.5, 0.0]}
    index.add(list(rows), list(rows.values()), list(rows), [{}] * 4)
    assert index.nearest([3.0, 0.0], 4) == [
        ("tie1", 0.0),
        ("tie2", 0.0),
        ("far", 1.0),
        ("zero", 1.0),
    ]
    assert index.nearest([0.0, 0.0], 2) == [("far", 1.0), ("tie1", 1.0)]  # a zero query: all at 1
    assert index.nearest([1.0, 0.0], 0) == []
    assert MemoryBackend().create("empty", {}).nearest([1.0, 0.0], 3) == []


def test_add_refuses_rows_of_unequal_lengths_by_count():
    index = MemoryBackend().create("kb", {})
    with pytest.raises(ValueError, match="2 ids, 1 vectors, 2 texts, 2 metadatas"):
        index.add(["a", "b"], [[1.0]], ["a", "b"], [{}, {}])
    assert index.count() == 0
