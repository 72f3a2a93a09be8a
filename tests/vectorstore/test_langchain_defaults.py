"""The LangChain surface of a collection takes LangChain's own defaults, which are ragingest's."""

from __future__ import annotations

import inspect

from langchain_core.vectorstores import VectorStore

from ragingest.vectorstore.langchain_reads import DEFAULT_FETCH_K, DEFAULT_K, DEFAULT_LAMBDA


def test_mmr_and_search_defaults_are_langchains():
    mmr = inspect.signature(VectorStore.max_marginal_relevance_search).parameters
    search = inspect.signature(VectorStore.similarity_search).parameters
    assert (search["k"].default, mmr["k"].default) == (DEFAULT_K, DEFAULT_K) == (4, 4)
    assert (mmr["fetch_k"].default, mmr["lambda_mult"].default) == (DEFAULT_FETCH_K, 0.5)
    assert DEFAULT_LAMBDA == 0.5
