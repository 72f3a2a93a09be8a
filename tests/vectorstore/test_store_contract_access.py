"""The store contract's access cases (``test_store_contract``'s stores): ``$contains`` on a list
of readers, and every read of ``guarded.GuardedSource`` limited to what its principals may read,
over the Chroma store, its reader and the memory store alike."""

from __future__ import annotations

import pytest
from langchain_core.documents import Document

from ragingest.errors import NoAccessPolicyError, PrincipalsRequiredError
from ragingest.vectorstore.access.guarded import GuardedSource
from ragingest.vectorstore.access.principals import ALL, Principals, access_filter
from ragingest.vectorstore.backends import open_backend
from ragingest.vectorstore.chroma.collection_info import ACCESS_POLICY_KEY
from ragingest.vectorstore.collection_reads import CollectionReads
from ragingest.vectorstore.opening import open_store
from ragingest.vectorstore.seam import ChunkSource, matches, parse_filter
from tests.in_memory import memory_collection
from tests.vectorstore.test_store_contract import NamedEmbeddings, _documents

READERS = [["group:hr"], ["user:ann", "group:legal"], ["*"], ["!nobody"], None]


def _with_readers() -> list[Document]:
    docs = _documents()
    for i, doc in enumerate(docs):
        readers = READERS[i % len(READERS)]
        if readers is not None:  # a chunk without the key: nobody reads it under a policy
            doc.metadata["access"] = readers
    return docs


@pytest.fixture(params=["chroma", "reader", "memory"])
def policy_source(request, tmp_path) -> ChunkSource:
    embeddings = NamedEmbeddings(dimensions=64)
    docs = _with_readers()
    parents = [d.page_content for d in docs]
    if request.param == "memory":
        memory = memory_collection(embeddings, policy=True)
        memory.add_documents(docs, parent_texts=parents)
        _parent_readers(memory, docs)
        return memory
    chroma = open_store(tmp_path, "contract", embeddings)
    chroma.add_documents(docs, parent_texts=parents)
    mark_policy(chroma.index.collection)
    _parent_readers(chroma, docs)
    if request.param == "chroma":
        return open_store(tmp_path, "contract", embeddings, create=False)
    return CollectionReads(
        open_backend(tmp_path).open(chroma.name), embeddings, lexical=chroma.lexical,
        parents=chroma.parent_store,
    )  # fmt: skip


def mark_policy(collection) -> None:
    """The collection's access policy marker, as an ingest under a policy sets it."""
    kept = {k: v for k, v in collection.metadata.items() if not k.startswith("hnsw:")}
    collection.modify(metadata={**kept, ACCESS_POLICY_KEY: True})


def _parent_readers(store, docs: list[Document]) -> None:
    """Each parent section readable by its first chunk's readers (p2 by nobody: no key)."""
    first: dict[str, Document] = {}
    for doc in docs:
        first.setdefault(doc.metadata["parent_id"], doc)
    rows = []
    for key, doc in first.items():
        meta = {"source": doc.metadata["source"]}
        if key != "p2" and "access" in doc.metadata:
            meta["access"] = doc.metadata["access"]
        rows.append((key, Document(page_content=f"parent {key}", metadata=meta)))
    store.parent_store.mset(rows)


CALLERS = [
    Principals.of(user="ann"),
    Principals.of(groups=["hr"]),
    Principals.of(user="zed", groups=["legal", "hr"]),
    Principals(("unix:user:nobody",)),
]


def test_contains_reads_a_list_of_readers(policy_source):
    for name in ("group:hr", "user:ann", "*", "!nobody", "group:none"):
        flt = parse_filter({"access": {"$contains": name}})
        want = {str(d.id) for d in _with_readers() if name in d.metadata.get("access", [])}
        assert set(policy_source.chunk_ids(flt)) == want
        assert {c.id for c in policy_source.chunks(None, flt)} == want
    assert policy_source.access_policy() is True


@pytest.mark.parametrize("caller", CALLERS, ids=lambda c: ",".join(c.names))
def test_every_guarded_read_admits_only_what_the_caller_may_read(policy_source, caller):
    guard = GuardedSource(policy_source, caller)
    admit = access_filter(caller, True)
    docs = _with_readers()
    readable = {str(d.id) for d in docs if matches(admit, d.metadata)}
    assert readable and readable != {str(d.id) for d in docs}
    assert set(guard.chunk_ids()) == readable and guard.count() == len(readable)
    every = [str(d.id) for d in docs]
    assert guard.held(every) == readable
    assert {c.id for c in guard.chunks()} == readable == {c.id for c in guard.chunks(every)}
    vector = guard.embed_query("alpha beta gamma delta unique3")
    assert {i for i, _ in guard.nearest(vector, 12)} == readable
    assert {c.id for c, _ in guard.nearest_chunks(vector, 12)} == readable
    assert set(guard.vectors(every)) == readable
    assert policy_source.lexical_in_step()  # upkeep: the unguarded source's
    if guard.lexical is not None:  # every word of every chunk: only readable ids come back
        words = " ".join(d.page_content for d in docs)
        hits = guard.lexical.search(words, 12)
        assert {i for i, _ in hits} == readable
        assert guard.lexical.search(words, 2, 1) == hits[1:3]
    parents = guard.parent_store.mget(["p0", "p1", "p2"])
    for key, parent in zip(["p0", "p1", "p2"], parents, strict=True):
        first = next(d for d in docs if d.metadata["parent_id"] == key)
        may = key != "p2" and matches(admit, first.metadata)
        assert (parent is not None) == may


def test_a_policy_read_names_its_principals_or_all(policy_source):
    with pytest.raises(PrincipalsRequiredError, match="principals=ALL"):
        GuardedSource(policy_source, None)
    everything = GuardedSource(policy_source, ALL)
    assert everything.count() == 12 and len(everything.chunk_ids()) == 12
    assert everything.parent_store.mget(["p2"])[0] is not None


def test_without_a_policy_principals_are_refused_and_none_or_all_read_everything(tmp_path):
    memory = memory_collection(NamedEmbeddings(dimensions=64))
    memory.add_documents(_documents())
    for who in (None, ALL):
        assert GuardedSource(memory, who).count() == 12
    with pytest.raises(NoAccessPolicyError, match="made without an access policy"):
        GuardedSource(memory, Principals.of(user="ann"))  # would filter nothing
