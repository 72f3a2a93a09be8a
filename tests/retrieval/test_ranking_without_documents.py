"""A ranking without the chunks (``rank_chunks(documents=False)`` + ``fill_documents``) is the
ranking with them, and the retriever that uses it returns what it returns with the chunks
fetched up front: over deterministic vectors on a real Chroma, with filters, a chunk stored
without text and an indexed id Chroma lacks (a write cut short). The rankings' own checks run
over the exact in-memory store too (``vectorstore.memory``): retrieval needs nothing of Chroma
but the store seam."""

from __future__ import annotations

from operator import attrgetter

import numpy as np
import pytest
from langchain_core.documents import Document

from ragingest.retrieval import retriever as retriever_module
from ragingest.retrieval.fusion import distribution_score_fusion
from ragingest.retrieval.heading_first import HeadingFirstRetriever
from ragingest.retrieval.retriever import ChunkRetriever
from ragingest.retrieval.search import fill_documents, lexical_page, rank_chunks
from ragingest.vectorstore.lexical.index import LexicalIndex
from ragingest.vectorstore.opening import open_store
from tests.fake_embeddings import HashedWordEmbeddings
from tests.in_memory import memory_collection

WORDS = "alpha beta gamma delta omega sigma kappa lambda theta zeta rho tau".split()
QUERIES = ["alpha beta", "gamma omega sigma", "kappa", "zeta rho tau theta", "nothing here"]
WHERES = [None, {"source": "f03.md"}, {"chunk_index": {"$gte": 2}}]


class NamedEmbeddings(HashedWordEmbeddings):
    """Hashed words under a model identity of their own (a collection records one)."""

    model_name = "hashed-words"
    fingerprint = "hashed-words-64"


def _chunks() -> tuple[list[Document], list[str]]:
    rng = np.random.default_rng(7)
    docs, parents = [], []
    for file in range(8):
        offset = 0
        for section in range(2):
            texts = [" ".join(rng.choice(WORDS, 5)) + f" f{file}s{section}c{i}" for i in range(3)]
            parent = "\n\n".join(texts)
            start = offset
            for i, text in enumerate(texts):
                at = start + sum(len(t) + 2 for t in texts[:i])
                meta = {
                    "source": f"f{file:02d}.md",
                    "doc_id": f"d{file:02d}",
                    "chunk_index": 3 * section + i,
                    "start_index": at,
                    "end_index": at + len(text),
                    "parent_id": f"p{file:02d}{section}",
                    "parent_start": start,
                    "parent_end": start + len(parent),
                }
                docs.append(Document(page_content=text, metadata=meta, id=f"c{file}{section}{i}"))
                parents.append(parent)
            offset = start + len(parent) + 2
    return docs, parents


@pytest.fixture
def store(tmp_path):
    chunk_store = open_store(tmp_path, "words", NamedEmbeddings(dimensions=64))
    docs, parents = _chunks()
    chunk_store.add_documents(docs, ids=[d.id for d in docs], parent_texts=parents)
    return chunk_store


@pytest.fixture(params=["chroma", "memory"])
def any_store(request, tmp_path):
    """The chunks in Chroma, or in the exact in-memory store with a lexical index."""
    if request.param == "chroma":
        return request.getfixturevalue("store")
    memory = memory_collection(NamedEmbeddings(dimensions=64), LexicalIndex(tmp_path, "words"))
    docs, parents = _chunks()
    memory.add_documents(docs, ids=[d.id for d in docs], parent_texts=parents)
    return memory


def _rows(ranking) -> list[tuple]:
    return [
        (h.chunk_id, h.chunk.id, h.chunk.page_content, h.chunk.metadata, h.score, h.dense_rank,
         h.dense_score, h.lexical_rank, h.lexical_score)
        for h in ranking.hits
    ]  # fmt: skip


def _cut_short(store) -> None:
    """A chunk in the index without its text, and an indexed id the index does not hold."""
    vector = store.embeddings.embed_query("alpha beta gamma")
    store.index.add(["textless"], [vector], [None], [{"source": "x"}])
    store.lexical.add(["textless", "gone"], ["alpha beta gamma", "alpha beta kappa zeta"])


@pytest.mark.parametrize("checked_beside", [False, True])
def test_ranking_without_documents_is_the_ranking_with_them(any_store, checked_beside):
    """Also with the lexical page searched and checked up front (``lexical_page``, as the
    retriever runs it beside the embedding), with and without its chunks."""
    store = any_store
    for query in QUERIES:
        for where in WHERES:
            for n in (4, 20, 40):
                full = rank_chunks(store, query, n, where=where, hybrid=True)
                first = lexical_page(store, query, n, where) if checked_beside else None
                bare = rank_chunks(
                    store, query, n, where=where, hybrid=True, documents=False, lexical_first=first
                )
                assert not any(hit.document is not None for hit in bare.hits)
                assert fill_documents(store, bare.hits)
                assert _rows(bare) == _rows(full) and bare.exhausted == full.exhausted
                assert len(full.hits) > 0 or query == "nothing here"
                if checked_beside:
                    page = lexical_page(store, query, n, where, documents=True)
                    fetched = rank_chunks(
                        store, query, n, where=where, hybrid=True, lexical_first=page
                    )
                    assert _rows(fetched) == _rows(full) and fetched.exhausted == full.exhausted


@pytest.mark.parametrize("dense_weight", [0.5, 0.2])
def test_dbsf_ranks_by_the_lists_scaled_scores(any_store, dense_weight):
    """The hybrid ranking with ``fusion="dbsf"`` is ``distribution_score_fusion`` over the
    dense and BM25 lists its own hits carry; a retriever with that option returns passages in
    that order."""
    store = any_store
    for query in QUERIES[:4]:
        ranking = rank_chunks(
            store, query, 20, hybrid=True, fusion="dbsf", dense_weight=dense_weight
        )
        lists = [
            sorted((h for h in ranking.hits if getattr(h, rank) is not None), key=attrgetter(rank))
            for rank in ("dense_rank", "lexical_rank")
        ]
        scored = [
            [(h.chunk_id, getattr(h, score)) for h in hits]
            for hits, score in zip(lists, ("dense_score", "lexical_score"), strict=True)
        ]
        assert all(scored)  # both lists take part
        want = distribution_score_fusion(scored, [dense_weight, 1 - dense_weight])
        assert [(h.chunk_id, h.score) for h in ranking.hits] == want
        chunks = ChunkRetriever(
            store=store, k=3, parents=False, dedup=False, fusion="dbsf", dense_weight=dense_weight
        )
        assert [s.chunk_ids[0] for s in chunks.passages(query)] == [i for i, _ in want[:3]]


def test_mmr_fuses_by_rank_whatever_the_fusion(any_store):
    store = any_store
    for query in QUERIES[:4]:
        orders = [
            [h.chunk_id for h in rank_chunks(store, query, 8, hybrid=True, search_type="mmr",
                                             lambda_mult=0.3, fusion=fusion).hits]
            for fusion in ("dbsf", "rrf")
        ]  # fmt: skip
        assert orders[0] == orders[1] and orders[0]


def test_an_unknown_fusion_is_refused(store, tmp_path):
    with pytest.raises(ValueError, match="fusion must be one of dbsf, rrf, not 'mean'"):
        rank_chunks(store, "alpha", 4, hybrid=True, fusion="mean")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"dense_weight must be between 0 and 1, not 1\.5"):
        HeadingFirstRetriever(
            persist_dir=tmp_path, collection="words", fusion="dbsf", dense_weight=1.5
        )


def test_a_dense_hit_without_text_asks_for_the_full_ranking(store):
    _cut_short(store)
    bare = rank_chunks(store, "alpha beta gamma", 20, hybrid=True, documents=False)
    assert "textless" in [h.chunk_id for h in bare.hits if h.dense_rank is not None]
    assert "gone" not in [h.chunk_id for h in bare.hits]
    assert not fill_documents(store, bare.hits)
    full = rank_chunks(store, "alpha beta gamma", 20, hybrid=True)
    textless = [h for h in full.hits if h.chunk_id == "textless"]
    assert textless and textless[0].dense_rank is None and textless[0].lexical_rank is not None


def _spans(found) -> list[tuple]:
    return [
        (s.source, s.start, s.end, s.text, s.metadata, s.score, s.chunk_ids, s.expanded,
         s.dense_rank, s.lexical_rank, s.dense_score, s.lexical_score)
        for s in found
    ]  # fmt: skip


@pytest.mark.parametrize("remote", [False, True])
@pytest.mark.parametrize("cut_short", [False, True])
def test_retriever_answers_as_with_the_chunks_fetched_up_front(
    store, monkeypatch, cut_short, remote
):
    if cut_short:
        _cut_short(store)
    retrievers = [
        ChunkRetriever(store=store, parent_store=store.parent_store, k=k, where=where)
        for k in (1, 4, 9)
        for where in WHERES
    ]
    for chunks in retrievers:  # as against a Chroma server: the ranking brings the chunks
        chunks._with_chunks = remote
    bare = [[_spans(r.passages(q)) for q in [*QUERIES, "alpha beta gamma"]] for r in retrievers]
    real = retriever_module.rank_chunks
    asked: list[bool] = []

    def with_documents(*args, **kwargs):
        asked.append(kwargs["documents"])
        return real(*args, **{**kwargs, "documents": True, "lexical_first": None})

    monkeypatch.setattr(retriever_module, "rank_chunks", with_documents)
    full = [[_spans(r.passages(q)) for q in [*QUERIES, "alpha beta gamma"]] for r in retrievers]
    assert bare == full
    assert (False not in asked) == remote  # a server's ranking comes with the chunks
    assert any(len(answer) == 9 for answers in full for answer in answers)
