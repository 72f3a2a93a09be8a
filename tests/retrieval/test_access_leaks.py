"""No read path returns what its caller may not read: random readers on random documents,
random callers, random queries, through every retrieval path (dense, lexical, hybrid dbsf and
rrf, MMR, parent expansion, neighbour joining under a budget, auto-merging, ``trace``,
``query.search``, the ``query``/``trace`` commands, LangChain's methods of
``open_store(principals=...)``), over a ``Collection`` of the exact memory index and over a
collection opened through the public API in each built-in store (``acl``: Chroma on disk, the
in-memory store), real model (its vectors computed once per module). The world:
``access_world``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragingest.errors import PrincipalsRequiredError
from ragingest.retrieval.context import ContextRetriever
from ragingest.retrieval.heading_first import HeadingFirstRetriever
from ragingest.retrieval.retriever import ChunkRetriever
from ragingest.retrieval.search import rank_chunks
from ragingest.vectorstore.access.guarded import GuardedSource
from ragingest.vectorstore.access.principals import ALL, Principals
from ragingest.vectorstore.backends import BUILT_IN, use_backend
from ragingest.vectorstore.collection import Collection
from ragingest.vectorstore.identity import POLICY_SETTING
from ragingest.vectorstore.lexical.index import LexicalIndex
from ragingest.vectorstore.opening import open_store
from ragingest.vectorstore.seam import ChunkSource
from tests.in_memory import memory_collection
from tests.retrieval.access_world import (
    CALLERS,
    DOCS,
    QUERIES,
    READERS,
    Precomputed,
    leaks,
    readable,
    write,
)
from tests.vectorstore.test_store_contract_access import mark_policy

pytestmark = [pytest.mark.model]
FIXTURE = HealthCheck.function_scoped_fixture  # the store is written anew by each example

# a document with no readers is written without the key: every backend's add replaces the
# whole metadata (the port's contract), so a key an earlier example wrote does not stay
readers_st = st.lists(
    st.lists(st.sampled_from(READERS), min_size=0, max_size=3), min_size=DOCS, max_size=DOCS
)
caller_st = st.lists(st.sampled_from(CALLERS), min_size=1, max_size=3, unique=True)
# (search_type, hybrid, fusion, parents, max_context_tokens, auto_merge)
CONFIGS = [
    ("similarity", False, "dbsf", True, None, None),
    ("similarity", True, "dbsf", True, None, None),
    ("similarity", True, "rrf", False, None, None),
    ("mmr", True, "dbsf", True, None, None),
    ("mmr", False, "dbsf", False, None, None),
    ("similarity", True, "dbsf", False, 120, None),
    ("similarity", False, "rrf", False, 400, 0.3),
    ("similarity", True, "dbsf", False, None, 0.3),
]


@pytest.fixture(scope="module")
def vectors() -> Precomputed:
    from ragingest.models.embeddings import SentenceTransformerEmbeddings

    model = SentenceTransformerEmbeddings()
    return Precomputed(model, model.info.name, model.info.fingerprint)


@pytest.fixture(scope="module", params=tuple(BUILT_IN))
def policy_collection(request, tmp_path_factory, vectors) -> tuple[Collection, Path, str]:
    """A collection made under an access policy in each built-in store: the writer's
    ``Collection``, the directory, the backend's name."""
    root, kind = tmp_path_factory.mktemp("acl"), str(request.param)
    policy = {POLICY_SETTING: True}  # the marker a run under an access policy records
    open_store(root, "acl", vectors, settings=policy, backend=kind)
    return open_store(root, "acl", vectors, backend=kind), root, kind


@pytest.fixture
def acl(policy_collection) -> Iterator[tuple[Collection, Path, str]]:
    """``policy_collection``, with its backend the one every entry point that takes none
    opens (``use_backend``, as the command line's ``--backend`` chooses it)."""
    with use_backend(policy_collection[2]):
        yield policy_collection


def retrievers(source: ChunkSource, config: tuple, k: int) -> list:
    """The retriever a ``HeadingFirstRetriever`` builds for ``config``, over ``source``."""
    search_type, hybrid, fusion, parents, budget, merge = config
    base = ChunkRetriever(
        store=source, parent_store=source.parent_store if parents else None, k=k * 4,
        fetch_k=20, parents=parents, search_type=search_type, hybrid=hybrid, fusion=fusion,
        dedup=budget is None or merge is not None,
    )  # fmt: skip
    if budget is None and merge is None:
        return [base]
    return [ContextRetriever(
        base=base, store=source, parent_store=source.parent_store, merge_threshold=merge,
        max_context_tokens=budget, k=k, count=len,
    )]  # fmt: skip


def check_source(source: ChunkSource, query: str, config: tuple, allowed: set[int]) -> None:
    """Every read path over ``source`` returns only ``allowed`` documents."""
    for retriever in retrievers(source, config, 4):
        docs = retriever.invoke(query)
        ids = [i for d in docs for i in d.metadata.get("chunk_ids", [])]
        assert not leaks([d.page_content for d in docs], ids, allowed), (config, docs)
    search_type, _, fusion = config[:3]
    ranking = rank_chunks(source, query, 40, hybrid=True, search_type=search_type, fusion=fusion)
    hits = ranking.hits
    assert not leaks([h.chunk.page_content for h in hits], [h.chunk_id for h in hits], allowed)
    if source.lexical is not None:
        assert not leaks([], [i for i, _ in source.lexical.search(query, 50)], allowed)
    parents = source.parent_store.mget([f"p{d:02d}" for d in range(DOCS)])
    assert {d for d, p in enumerate(parents) if p is not None} <= allowed
    assert {int(i[1:3]) for i in source.chunk_ids()} <= allowed
    assert source.count() == 3 * len(allowed)


@settings(max_examples=40, deadline=None, suppress_health_check=[FIXTURE])
@given(readers=readers_st, caller=caller_st, query=st.sampled_from(QUERIES),
       config=st.sampled_from(CONFIGS))  # fmt: skip
def test_no_read_of_the_memory_store_leaks(
    tmp_path_factory, vectors, readers, caller, query, config
):
    memory = memory_collection(
        vectors, LexicalIndex(tmp_path_factory.mktemp("lex"), "acl"), policy=True
    )
    write(memory, readers, vectors)
    allowed = readable(readers, caller)
    check_source(GuardedSource(memory, Principals(tuple(caller))), query, config, allowed)


@settings(max_examples=15, deadline=None, suppress_health_check=[FIXTURE])
@given(readers=readers_st, caller=caller_st, query=st.sampled_from(QUERIES),
       config=st.sampled_from(CONFIGS))  # fmt: skip
def test_no_read_of_a_stored_collection_leaks(acl, vectors, readers, caller, query, config):
    from ragingest.evaluate.trace import trace
    from ragingest.retrieval.query import search

    writer, root, kind = acl
    write(writer, readers, vectors)
    allowed = readable(readers, caller)
    who = Principals(tuple(caller))
    reader = open_store(root, "acl", vectors, create=False, backend=kind)
    check_source(GuardedSource(reader, who), query, config, allowed)
    # the README's
    plain = open_store(root, "acl", vectors, create=False, principals=who, backend=kind)
    found = [
        *plain.similarity_search(query, k=20),
        *plain.max_marginal_relevance_search(query, k=8, fetch_k=20),
        *plain.as_retriever(search_kwargs={"k": 20}).invoke(query),
        *plain.get_by_ids([f"c{d:02d}{p}" for d in range(DOCS) for p in range(3)]),
    ]
    got = plain.get()
    assert not leaks([d.page_content for d in found], [str(d.id) for d in found], allowed)
    assert not leaks(got["documents"], got["ids"], allowed)
    search_type, hybrid, fusion, parents, budget, merge = config
    # under a budget, each second stage too: "sentences" reads whole parent sections, the
    # others ("next-section", the default) reorder the candidates
    stage = {120: "sentences", 400: "neighbours"}.get(budget or 0, "next-section")
    public = HeadingFirstRetriever(
        persist_dir=root, collection="acl", k=4, search_type=search_type, hybrid=hybrid,
        fusion=fusion, parents=parents, max_context_tokens=budget, auto_merge=merge,
        tokenizer=len, principals=list(caller), second_stage=stage,
    )  # fmt: skip
    given = HeadingFirstRetriever.from_collection(
        open_store(root, "acl", vectors, create=False, backend=kind), k=4, search_type=search_type,
        hybrid=hybrid, fusion=fusion, parents=parents, max_context_tokens=budget,
        auto_merge=merge, tokenizer=len, principals=list(caller), second_stage=stage,
    )  # fmt: skip
    for docs in (public.invoke(query), given.invoke(query)):
        ids = [i for d in docs for i in d.metadata.get("chunk_ids", [])]
        assert not leaks([d.page_content for d in docs], ids, allowed)
    hits = search(query, root, "acl", k=8, hybrid=hybrid, principals=who, backend=kind)
    assert not leaks([h["text"] for h in hits], [h["id"] for h in hits], allowed)
    expect = [f"mark{d:02d}zq" for d in range(0, DOCS, 5)]
    found = trace(query, expect, persist_dir=root, collection="acl", k=4, hybrid=hybrid,
                  principals=who).to_json()  # fmt: skip
    found.pop("question")  # the caller's own words, not the store's
    for expectation in found["expectations"]:
        expectation.pop("text")
    report = json.dumps(found)
    assert not leaks([report], [], allowed)
    assert not [d for d in range(DOCS) if d not in allowed and f'"c{d:02d}' in report]


def test_every_entry_point_refuses_a_policy_read_naming_nobody(acl, vectors):
    from ragingest.evaluate.trace import trace
    from ragingest.retrieval.query import search

    writer, root, _kind = acl
    write(writer, [["group:hr"]] * DOCS, vectors)
    with pytest.raises(PrincipalsRequiredError, match="principals=ALL"):
        HeadingFirstRetriever(persist_dir=root, collection="acl")
    with pytest.raises(PrincipalsRequiredError):
        search("vacation", root, "acl")
    with pytest.raises(PrincipalsRequiredError):
        trace("vacation", ["mark01zq"], persist_dir=root, collection="acl")
    everything = HeadingFirstRetriever(persist_dir=root, collection="acl", k=40, parents=False,
                                       principals=ALL, tokenizer=len)  # fmt: skip
    assert len(everything.invoke("vacation days")) == 3 * DOCS
    nobody = HeadingFirstRetriever(persist_dir=root, collection="acl", principals=["user:ann"])
    assert nobody.invoke("vacation days") == []
    hr = HeadingFirstRetriever(persist_dir=root, collection="acl", principals=["group:hr"], k=2)
    assert len(hr.invoke("vacation days")) == 2


def test_ragingest_exports_who_reads_and_its_retriever_takes_it(acl, vectors):
    import ragingest
    import ragingest.retrieval
    from ragingest import ALL as top_all
    from ragingest import Principals as TopPrincipals
    from ragingest.retrieval import ALL as retrieval_all

    assert top_all is ALL is retrieval_all and TopPrincipals is Principals
    assert ragingest.retrieval.Principals is Principals
    writer, root, _kind = acl
    write(writer, [["group:hr"] if d < 3 else ["user:bob"] for d in range(DOCS)], vectors)
    with pytest.raises(PrincipalsRequiredError):
        ragingest.retriever(root, "acl")
    hr = ragingest.retriever(root, "acl", k=20, parents=False, principals=["group:hr"])
    assert {d.metadata["doc_id"] for d in hr.invoke("vacation")} == {"d00", "d01", "d02"}
    bob = ragingest.retriever(root, "acl", k=20, principals=Principals.of(user="bob"))
    assert "d00" not in {d.metadata["doc_id"] for d in bob.invoke("vacation days")}
    assert len(ragingest.retriever(root, "acl", k=40, parents=False, principals=ALL)
               .invoke("vacation")) == 3 * DOCS  # fmt: skip
    with pytest.raises(ValueError, match="give a list"):
        ragingest.retriever(root, "acl", principals="group:hr")


def test_the_cli_names_who_reads_or_refuses_with_exit_2(acl, vectors, capsys):
    from ragingest.cli.main import main
    from ragingest.errors import EXIT_OK, EXIT_USAGE

    writer, root, kind = acl
    readers = [["group:hr"] if d % 2 else ["user:ann"] for d in range(DOCS)]
    write(writer, readers, vectors)
    where = ["--persist-dir", str(root), "--collection", "acl", "--json"]
    query = ["query", "--backend", kind]  # trace has none: it opens the enclosing one (acl)
    capsys.readouterr()
    assert main([*query, "how many vacation days", *where]) == EXIT_USAGE
    assert "--as USER --group G" in capsys.readouterr().err
    assert main([*query, "how many vacation days", *where, "--as", "ann", "-k", "20"]) == EXIT_OK
    hits = json.loads(capsys.readouterr().out)
    assert hits and {int(h["id"][1:3]) % 2 for h in hits} == {0}
    assert main([*query, "vacation", *where, "--group", "hr", "--group", "eng"]) == EXIT_OK
    assert {int(h["id"][1:3]) % 2 for h in json.loads(capsys.readouterr().out)} == {1}
    assert main([*query, "vacation", *where, "--all-principals", "-k", "20"]) == EXIT_OK
    assert {int(h["id"][1:3]) % 2 for h in json.loads(capsys.readouterr().out)} == {0, 1}
    assert main([*query, "vacation", *where, "--all-principals", "--as", "ann"]) == EXIT_USAGE
    trace_args = ["trace", "vacation", "--expect", "mark01zq", *where]
    assert main(trace_args) == EXIT_USAGE
    capsys.readouterr()
    main([*trace_args, "--as", "ann"])
    report = json.loads(capsys.readouterr().out)
    assert report["expectations"][0]["checkpoints"][0]["ok"] is False  # doc 1 is hr's
    with pytest.raises(SystemExit):
        main(["query", "--help"])
    assert "--all-principals" in capsys.readouterr().out


@pytest.mark.slow
def test_search_through_a_chroma_server_reads_only_what_the_caller_may(tmp_path, vectors):
    from ragingest.retrieval.query import search
    from tests.chroma import chroma_server

    (tmp_path / "server").mkdir()
    readers = [["group:hr"] if d % 3 == 0 else ["user:ann", "group:eng"] for d in range(DOCS)]
    with chroma_server(tmp_path / "server") as server:
        writer = open_store(tmp_path / "db", "acl", vectors, server=server)
        write(writer, readers, vectors)
        mark_policy(writer.index.collection)
        with pytest.raises(PrincipalsRequiredError):
            search("vacation", tmp_path / "db", "acl", server=server)
        for caller in (["group:hr"], ["user:ann"], ["group:legal"]):
            allowed = readable(readers, caller)
            who = Principals(tuple(caller))
            for hybrid in (True, False):
                hits = search("mark03zq vacation days", tmp_path / "db", "acl", k=40,
                              hybrid=hybrid, server=server, principals=who)  # fmt: skip
                assert {int(h["id"][1:3]) for h in hits} == allowed
