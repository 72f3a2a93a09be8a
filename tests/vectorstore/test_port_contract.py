"""The store port's contract (``vectorstore.port``'s docstrings), one suite for every backend in
``backends.BUILT_IN``, opened through the registry as the pipeline opens it: the lifecycle of a
place's collections (``port.Backend``) and one collection's reads and writes
(``port.DenseIndex``). Exact values over deterministic test vectors (``VECTORS``: fixed
numbers, no model), with the nearest order checked against distances computed here with
numpy. Every backend passes every point: none is marked as a backend's known miss."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from ragingest.vectorstore import backends
from ragingest.vectorstore.names import safe_name
from ragingest.vectorstore.port import Backend, DenseIndex
from ragingest.vectorstore.seam import matches, parse_filter

NAME = "contract"
GIVEN = {"ragingest_model": "test-vectors", "ragingest_settings": "{}"}

# Deterministic test vectors: ten chunks in 4 dimensions, a query and its exact distances.
VECTORS = [
    [1.0, 0.0, 0.0, 0.0],
    [0.9, 0.1, 0.0, 0.0],
    [0.7, 0.3, 0.1, 0.0],
    [0.5, 0.5, 0.2, 0.1],
    [0.3, 0.7, 0.0, 0.3],
    [0.1, 0.9, 0.4, 0.0],
    [0.0, 1.0, 0.0, 0.6],
    [0.0, 0.2, 1.0, 0.0],
    [0.0, 0.0, 0.3, 1.0],
    [-1.0, 0.1, 0.0, 0.0],
]
QUERY = [1.0, 0.3, 0.1, 0.0]
IDS = [f"c{i}" for i in range(len(VECTORS))]
TEXTS: list[str | None] = [f"text {i}" for i in range(len(VECTORS))]
TEXTS[3] = None  # stored without text: nearest_chunks leaves it out
METADATAS = [
    {"source": f"f{i % 3}.md", "chunk_index": i, **({"lang": "ru"} if i % 2 else {})}
    | ({"access": ["group:hr", "user:ann"]} if i in (2, 5) else {})
    for i in range(len(VECTORS))
]
FILTERS = [
    None,
    {"source": "f1.md"},
    {"chunk_index": {"$gte": 6}},
    {"lang": {"$ne": "ru"}},  # a chunk without the key passes $ne
    {"source": {"$in": ["f0.md", "f2.md"]}},
    {"source": {"$nin": ["f0.md"]}},
    {"$and": [{"source": "f0.md"}, {"chunk_index": {"$gt": 2}}]},
    {"$or": [{"lang": "ru"}, {"chunk_index": {"$lte": 1}}]},
    {"access": {"$contains": "group:hr"}},
    {"source": "nowhere.md"},
]


def _distance(a: list[float], b: list[float]) -> float:
    u, v = np.asarray(a), np.asarray(b)
    return float(1.0 - u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))


EXACT = {i: _distance(QUERY, v) for i, v in zip(IDS, VECTORS, strict=True)}


@pytest.fixture(params=list(backends.BUILT_IN))
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def backend(kind: str, tmp_path) -> Backend:
    return backends.open_backend(tmp_path / "store", kind=kind)


@pytest.fixture
def index(backend: Backend) -> DenseIndex:
    created = backend.create(NAME, GIVEN)
    created.add(IDS, VECTORS, TEXTS, METADATAS)
    return created


def test_the_test_vectors_have_no_near_ties():
    """The exact order below holds on any store's float32 arithmetic."""
    ranked = sorted(EXACT.values())
    assert min(b - a for a, b in itertools.pairwise(ranked)) > 1e-3


def test_a_backend_is_the_port_and_takes_every_name_ragingest_gives(backend):
    assert isinstance(backend, Backend) and backend.remote is False
    given = {safe_name(typed) for typed in ("kb", "отпуск", "my docs", "a", "my-docs", "x" * 80)}
    for name in given:
        assert backend.create(name, GIVEN).name == name
    assert backend.names() == given and len(given) == 6


def test_create_open_names_and_metadata(backend):
    assert backend.names() == set() and backend.metadata(NAME) is None
    created = backend.create(NAME, GIVEN)
    assert isinstance(created, DenseIndex) and created.name == NAME
    assert created.max_batch >= 1 and created.count() == 0
    assert backend.names() == {NAME}
    recorded = backend.metadata(NAME)
    assert recorded is not None and {k: recorded[k] for k in GIVEN} == GIVEN
    assert {k: created.metadata()[k] for k in GIVEN} == GIVEN
    created.add(IDS[:2], VECTORS[:2], TEXTS[:2], METADATAS[:2])
    again = backend.create(NAME, {"ragingest_model": "another"})  # exists: kept as it was
    assert again.count() == 2 and backend.metadata(NAME) == recorded
    opened = backend.open(NAME)
    assert opened.name == NAME and [c.id for c in opened.get()] == ["c0", "c1"]


def test_open_of_a_missing_collection_raises_key_error_naming_it(backend):
    with pytest.raises(KeyError, match="'missing-one'"):
        backend.open("missing-one")
    assert backend.names() == set()


def test_rename_keeps_the_data_and_open_indexes_working(backend, index):
    recorded = backend.metadata(NAME)
    backend.rename(NAME, "renamed")
    assert backend.names() == {"renamed"} and backend.metadata(NAME) is None
    assert backend.metadata("renamed") == recorded
    index.add(["new"], [[0.0, 0.0, 0.0, 1.0]], ["new"], [{"source": "n.md"}])
    opened = backend.open("renamed")
    assert opened.name == "renamed" and opened.count() == 11
    assert set(opened.ids()) == {*IDS, "new"}


def test_an_open_index_reads_its_new_name_after_a_rename(backend, index):
    backend.rename(NAME, "renamed")
    assert index.name == "renamed"


def test_rename_onto_an_existing_name_is_refused_and_changes_nothing(backend, index):
    other = backend.create("other", {"ragingest_model": "other"})
    with pytest.raises(ValueError, match="collection 'other' exists"):
        backend.rename(NAME, "other")
    assert backend.names() == {NAME, "other"}
    assert index.count() == 10 and other.count() == 0


def test_drop_forgets_one_collection_and_never_raises(backend, index):
    backend.create("other", {"ragingest_model": "other"}).add(["o"], [QUERY], ["o"], [{"k": 1}])
    backend.drop(NAME)
    assert backend.names() == {"other"} and backend.metadata(NAME) is None
    backend.drop(NAME)
    backend.drop("never-made")
    with pytest.raises(KeyError, match=f"'{NAME}'"):
        backend.open(NAME)
    assert backend.open("other").ids() == ["o"]
    assert backend.create(NAME, GIVEN).count() == 0  # a new one, empty


def test_add_is_an_upsert_of_text_and_vector(index):
    index.add(["c1", "c9"], [VECTORS[7], QUERY], ["one again", "nine again"], METADATAS[1:2] * 2)
    assert index.count() == 10
    got = {c.id: c for c in index.get(["c1", "c9"])}
    assert got["c1"].text == "one again" and got["c9"].text == "nine again"
    vectors = index.vectors(["c1", "c9"])
    assert np.allclose(vectors["c1"], VECTORS[7]) and np.allclose(vectors["c9"], QUERY)
    assert index.nearest(QUERY, 1) == [("c9", pytest.approx(0.0, abs=1e-6))]


def test_an_upsert_without_text_forgets_the_old_text(index):
    index.add(["c1"], [VECTORS[1]], [None], [METADATAS[1]])
    assert index.get(["c1"])[0].text is None
    assert "c1" not in [c.id for c, _ in index.nearest_chunks(QUERY, 10)]


def test_add_replaces_the_whole_metadata(index):
    index.add(["c1"], [VECTORS[1]], ["text 1"], [{"source": "moved.md"}])
    assert index.get(["c1"])[0].metadata == {"source": "moved.md"}


def test_delete_forgets_ids_and_unknown_ids_are_no_error(index):
    index.delete([])
    index.delete(["absent", "c0", "c4", "also-absent"])
    assert index.count() == 8 and index.held(["c0", "c1", "c4"]) == {"c1"}
    assert "c0" not in [i for i, _ in index.nearest(QUERY, 10)]
    assert index.get(["c0"]) == [] and index.vectors(["c0"]) == {}
    index.delete(["c0"])
    assert index.count() == 8


def test_update_metadata_touches_nothing_else(index):
    order = index.ids()
    before = {c.id: c for c in index.get()}
    vectors = index.vectors(IDS)
    changed = {**METADATAS[4], "access": ["user:bob"]}
    index.update_metadata(["c4", "absent"], [changed, {"source": "ghost.md"}])
    after = {c.id: c for c in index.get()}
    assert after["c4"].metadata == changed and after["c4"].text == before["c4"].text
    assert {i: c for i, c in after.items() if i != "c4"} == {
        i: c for i, c in before.items() if i != "c4"
    }
    assert index.ids() == order and index.count() == 10 and "absent" not in index.ids()
    assert all(np.allclose(index.vectors(IDS)[i], vectors[i]) for i in IDS)
    assert index.ids(parse_filter({"access": {"$contains": "user:bob"}})) == ["c4"]


def test_update_metadata_replaces_the_whole_metadata(index):
    index.update_metadata(["c5"], [{"source": "f2.md"}])
    assert index.get(["c5"])[0].metadata == {"source": "f2.md"}


@pytest.mark.parametrize("where", FILTERS)
def test_nearest_is_exact_ordered_and_filtered(index, where):
    flt = parse_filter(where)
    admitted = [i for i, m in zip(IDS, METADATAS, strict=True) if matches(flt, m)]
    expected = sorted(admitted, key=EXACT.__getitem__)
    for n in (1, 3, 20):
        nearest = index.nearest(QUERY, n, flt)
        assert [i for i, _ in nearest] == expected[:n]
        assert all(abs(d - EXACT[i]) < 1e-5 for i, d in nearest)
        chunks = index.nearest_chunks(QUERY, n, flt)
        with_text = [i for i in expected[:n] if TEXTS[IDS.index(i)] is not None]
        assert [c.id for c, _ in chunks] == with_text
        for chunk, distance in chunks:
            k = IDS.index(chunk.id)
            assert (chunk.text, chunk.metadata) == (TEXTS[k], METADATAS[k])
            assert abs(distance - EXACT[chunk.id]) < 1e-5


@pytest.mark.parametrize("where", FILTERS)
def test_every_read_by_id_obeys_the_filter(index, where):
    flt = parse_filter(where)
    admitted = {i for i, m in zip(IDS, METADATAS, strict=True) if matches(flt, m)}
    asked = ["c8", "c0", "absent", "c5", "c3"]
    assert set(index.ids(flt)) == admitted
    assert index.held(asked, flt) == admitted & set(asked)
    got = index.get(asked, flt)
    assert [c.id for c in got] == [i for i in index.ids() if i in admitted & set(asked)]
    vectors = index.vectors(asked, flt)
    assert set(vectors) == admitted & set(asked)
    for chunk_id, vector in vectors.items():
        assert np.allclose(vector, VECTORS[IDS.index(chunk_id)], atol=1e-6)


def test_get_returns_rows_exactly_and_pages_the_stores_order(index):
    rows = index.get()
    assert sorted(c.id for c in rows) == sorted(IDS) and [c.id for c in rows] == index.ids()
    for chunk in rows:
        k = IDS.index(chunk.id)
        assert (chunk.text, chunk.metadata) == (TEXTS[k], METADATAS[k])
    pages = [index.get(limit=3, offset=start) for start in range(0, 12, 3)]
    assert [c.id for page in pages for c in page] == [c.id for c in rows]
    assert [len(page) for page in pages] == [3, 3, 3, 1]
    assert index.get(limit=0) == [] and index.get([]) == []
    assert index.held([]) == set() and index.vectors([]) == {}
    where = parse_filter({"lang": "ru"})
    odd = [c.id for c in index.get(where=where)]
    assert sorted(odd) == ["c1", "c3", "c5", "c7", "c9"]
    assert [c.id for c in index.get(where=where, limit=2, offset=1)] == odd[1:3]


def test_count_follows_every_write(index):
    assert index.count() == 10
    index.add(["x"], [QUERY], ["x"], [{"source": "x.md"}])
    index.add(["x"], [QUERY], ["x"], [{"source": "x.md"}])
    assert index.count() == 11
    index.delete(["x", "c0"])
    assert index.count() == 9


def test_reads_return_copies(index):
    chunk = index.get(["c2"])[0]
    chunk.metadata["access"].append("user:eve")
    chunk.metadata["source"] = "changed.md"
    assert index.get(["c2"])[0].metadata == METADATAS[2]
