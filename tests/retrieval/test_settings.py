"""Each retrieval setting's default is declared once, in ``ragingest.defaults``: the
retriever's fields (``RetrievalSettings``), ``ragingest.retriever``, the ranking under them,
``search`` and ``trace`` take it from there."""

from __future__ import annotations

import inspect

import pytest

import ragingest
from ragingest import defaults
from ragingest.evaluate.trace import trace
from ragingest.retrieval import HeadingFirstRetriever
from ragingest.retrieval.query import search
from ragingest.retrieval.retriever import ChunkRetriever
from ragingest.retrieval.search import candidate_depth, rank_chunks
from ragingest.retrieval.settings import RetrievalSettings

EXPECTED = {
    "k": defaults.TOP_K,
    "search_type": defaults.SEARCH_TYPE,
    "lambda_mult": defaults.LAMBDA_MULT,
    "hybrid": defaults.HYBRID,
    "fusion": defaults.FUSION,
    "dense_weight": defaults.DENSE_WEIGHT,
    "join_neighbours": defaults.JOIN_NEIGHBOURS,
    "second_stage": defaults.SECOND_STAGE,
}


def default_of(function, name: str):
    return inspect.signature(function).parameters[name].default


def test_the_retriever_takes_its_search_fields_from_retrieval_settings() -> None:
    assert issubclass(HeadingFirstRetriever, RetrievalSettings)
    for name, field in RetrievalSettings.model_fields.items():
        inherited = HeadingFirstRetriever.model_fields[name]
        assert (inherited.default, inherited.description) == (field.default, field.description)
        assert default_of(ragingest.retriever, name) == field.default, name
    for name, value in EXPECTED.items():
        assert RetrievalSettings.model_fields[name].default == value, name


def test_the_ranking_search_and_trace_take_the_same_defaults() -> None:
    for name in ("search_type", "lambda_mult"):
        assert default_of(rank_chunks, name) == EXPECTED[name]
        assert ChunkRetriever.model_fields[name].default == EXPECTED[name]
    assert ChunkRetriever.model_fields["hybrid"].default is defaults.HYBRID
    assert default_of(rank_chunks, "fetch_k") == defaults.MIN_CANDIDATES == candidate_depth(0)
    assert ChunkRetriever.model_fields["fetch_k"].default == defaults.MIN_CANDIDATES
    assert default_of(rank_chunks, "hybrid") is inspect.Parameter.empty  # each caller says
    assert default_of(search, "hybrid") is default_of(trace, "hybrid") is defaults.HYBRID
    assert default_of(search, "fusion") == defaults.FUSION


def test_rank_chunks_without_hybrid_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="hybrid"):
        rank_chunks(None, "q", 4)  # type: ignore[call-arg,arg-type]
