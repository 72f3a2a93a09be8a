"""The ids each principal may read, kept per write generation (``readable_ids``), and the write
generation itself (``gate``): every write moves it, so a revocation reaches a reader whose sets
are warm at once, and a set that is stale anyway never shows a text (``guarded``)."""

from __future__ import annotations

import threading
import uuid

import pytest
from langchain_core.documents import Document

from ragingest.vectorstore.access.guarded import POOL_CAP, POOL_MIN, GuardedSource
from ragingest.vectorstore.access.principals import Principals
from ragingest.vectorstore.access.readable_ids import ReadableIds, readable
from ragingest.vectorstore.gate import ReadGate
from ragingest.vectorstore.memory.index import MemoryIndex, Table
from ragingest.vectorstore.opening import open_store
from tests.in_memory import memory_collection
from tests.postgres import postgres_server, server_bin
from tests.vectorstore.test_store_contract import NamedEmbeddings
from tests.vectorstore.test_store_contract_access import mark_policy

HR = Principals.of(user="ann", groups=["hr"])
WORDS = "vacation leave salary budget contract audit"


def _docs() -> list[Document]:
    """Six chunks: c0-c2 readable by group:hr, c3-c4 by group:legal, c5 public."""
    readers = [["group:hr"]] * 3 + [["group:legal"]] * 2 + [["*"]]
    return [
        Document(f"{WORDS} chunk{i}", id=f"c{i}", metadata={"source": f"f{i}.md", "access": r})
        for i, r in enumerate(readers)
    ]


@pytest.fixture
def policy_store(tmp_path):
    store = open_store(tmp_path, "acl", NamedEmbeddings(dimensions=64))
    store.add_documents(_docs())
    mark_policy(store.index.collection)
    return tmp_path


def _reads(guard: GuardedSource) -> dict[str, set[str]]:
    """What each kind of read returns to ``guard``'s caller."""
    vector = guard.embed_query(WORDS)
    every = [f"c{i}" for i in range(6)]
    assert guard.lexical is not None
    return {
        "count": {str(guard.count())},
        "nearest": {i for i, _ in guard.nearest(vector, 6)},
        "nearest_chunks": {c.id for c, _ in guard.nearest_chunks(vector, 6)},
        "held": guard.held(every),
        "chunks": {c.id for c in guard.chunks(every)},
        "vectors": set(guard.vectors(every)),
        "lexical": {i for i, _ in guard.lexical.search(WORDS, 6)},
    }


def _expect(ids: set[str]) -> dict[str, set[str]]:
    return {"count": {str(len(ids))}} | {
        read: ids
        for read in ("nearest", "nearest_chunks", "held", "chunks", "vectors", "lexical")
    }


def test_every_exclusive_hold_moves_the_generation_twice_and_nests(tmp_path):
    gate = ReadGate(tmp_path, "acl")
    assert gate.generation() == 0
    with gate.writing():
        assert gate.generation() == 1  # moved when taken: a writer dying here still moved it
        with gate.writing():  # the store's own write inside the writer's group
            pass
    assert gate.generation() == 2 == ReadGate(tmp_path, "acl").generation()
    def write() -> None:
        with gate.writing():
            pass

    wrote = threading.Thread(target=write)
    with gate.reading():
        wrote.start()  # waits for this reader: the value it read stays the collection's
        wrote.join(timeout=0.3)
        assert wrote.is_alive() and gate.generation() == 2
    wrote.join()
    assert gate.generation() == 4


def test_each_store_write_moves_the_generation(tmp_path):
    store = open_store(tmp_path, "acl", NamedEmbeddings(dimensions=64))
    gate = store.gate
    assert gate is not None
    before = gate.generation()
    store.add_documents(_docs())
    store.set_access(["c0"], ["group:legal"])
    store.delete(["c5"])
    assert gate.generation() == before + 6


class CountingIndex(MemoryIndex):
    """An in-memory index that counts the filtered id reads the sets are made of."""

    reads = 0

    def ids(self, where=None):
        self.reads += 1
        return super().ids(where)


def test_sets_are_read_once_per_principal_per_generation(tmp_path):
    counted = CountingIndex(Table("counted", {}))
    source = memory_collection(NamedEmbeddings(dimensions=64), index=counted)
    source.add_documents(_docs())
    gate = ReadGate(tmp_path, f"x{uuid.uuid4().hex}")
    names = ["*", "group:hr", "user:ann"]
    first = readable(source, gate, names)
    assert first.ids == {"c0", "c1", "c2", "c5"} and first.total == 6 and counted.reads == 3
    assert readable(source, gate, names) is first and counted.reads == 3
    assert readable(source, gate, ["*", "group:legal"]).ids == {"c3", "c4", "c5"}
    assert counted.reads == 4  # "*" was kept
    with gate.writing():
        pass
    assert readable(source, gate, names).ids == first.ids and counted.reads == 7


def test_a_revocation_reaches_a_reader_with_warm_sets_at_once(policy_store):
    embeddings = NamedEmbeddings(dimensions=64)
    guard = GuardedSource(open_store(policy_store, "acl", embeddings, create=False), HR)
    assert _reads(guard) == _expect({"c0", "c1", "c2", "c5"})  # the sets are warm now
    writer = open_store(policy_store, "acl", embeddings, create=False)  # another process's
    writer.set_access(["c1", "c2"], ["group:legal"])
    assert _reads(guard) == _expect({"c0", "c5"})
    writer.set_access(["c3"], ["group:hr"])  # a grant, as soon
    assert _reads(guard) == _expect({"c0", "c3", "c5"})
    fresh = GuardedSource(open_store(policy_store, "acl", embeddings, create=False), HR)
    assert _reads(fresh) == _expect({"c0", "c3", "c5"})


def test_a_stale_set_never_shows_a_text(policy_store):
    store = open_store(policy_store, "acl", NamedEmbeddings(dimensions=64), create=False)
    guard = GuardedSource(store, HR)
    assert guard.count() == 4  # warm
    # changed behind the gate's back (the index written directly): the sets still admit c1
    (c1,) = store.index.get(["c1"])
    store.index.update_metadata(["c1"], [{**c1.metadata, "access": ["group:legal"]}])
    assert "c1" in guard.held(["c1"])
    vector = guard.embed_query(WORDS)
    assert {c.id for c in guard.chunks(["c0", "c1"])} == {"c0"}
    assert {c.id for c, _ in guard.nearest_chunks(vector, 6)} == {"c0", "c2", "c5"}


@pytest.mark.parametrize(
    ("share", "n", "pool"),
    [(0.25, 20, 240), (0.5, 20, POOL_MIN), (1.0, 300, 900), (0.02, 20, None), (0.0, 20, None)],
)
def test_the_dense_pool_holds_three_times_n_readable_chunks(share, n, pool):
    """Deterministic: the pool for a caller reading ``share`` of a 10 000-chunk collection."""
    # principals name readers only under a policy
    memory = memory_collection(NamedEmbeddings(dimensions=8), policy=True)
    guard = GuardedSource(memory, HR)
    ids = ReadableIds(frozenset(str(i) for i in range(int(share * 10_000))), 10_000)
    assert guard.pool(n, ids) == pool
    assert POOL_CAP < 3 * 20 / 0.02  # (the fourth case: past the cap, Chroma's filter answers)


def test_the_generation_lives_beside_postgres_advisory_locks(tmp_path):
    if server_bin() is None:
        pytest.skip("PostgreSQL server binaries not installed (scripts/setup.sh installs them)")
    with postgres_server() as server:
        url = server.create_database(f"t_{uuid.uuid4().hex[:12]}")
        gate = ReadGate(tmp_path, "acl", url)
        assert gate.shared and gate.generation() == 0  # no table yet: nothing written
        with gate.writing(), gate.writing():
            pass
        other = ReadGate(tmp_path / "elsewhere", "acl", url)  # another machine's reader
        assert other.generation() == 2
        with other.reading():
            assert other.generation() == 2
        assert ReadGate(tmp_path, "other", url).generation() == 0  # per collection there
