"""LangChain's standard tests (langchain-tests), which every partner package runs: the
retriever (built by ``ragingest.retriever`` over an ingested examples/ collection) and the
project's ``SentenceTransformerEmbeddings`` (the real default model)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_tests.integration_tests import (
    EmbeddingsIntegrationTests,
    RetrieversIntegrationTests,
)
from langchain_tests.unit_tests import EmbeddingsUnitTests

import ragingest
from ragingest.models.embeddings import SentenceTransformerEmbeddings

pytestmark = pytest.mark.slow

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def examples_kb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    persist = tmp_path_factory.mktemp("standard") / "kb"
    report = ragingest.ingest([EXAMPLES], persist_dir=persist, collection="examples")
    assert not report.error and report.added > 0
    return persist


class TestRetrieverStandard(RetrieversIntegrationTests):
    persist: Path

    @pytest.fixture(autouse=True)
    def _kb(self, examples_kb: Path) -> None:
        type(self).persist = examples_kb

    @property
    def retriever_constructor(self) -> Any:
        return ragingest.retriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"persist_dir": self.persist, "collection": "examples"}

    @property
    def retriever_query_example(self) -> str:
        return "сколько стоит доставка по Москве"


class TestEmbeddingsUnitStandard(EmbeddingsUnitTests):
    @property
    def embeddings_class(self) -> type[SentenceTransformerEmbeddings]:
        return SentenceTransformerEmbeddings

    @property
    def embedding_model_params(self) -> dict[str, Any]:
        return {}


class TestEmbeddingsIntegrationStandard(EmbeddingsIntegrationTests):
    @property
    def embeddings_class(self) -> type[SentenceTransformerEmbeddings]:
        return SentenceTransformerEmbeddings

    @property
    def embedding_model_params(self) -> dict[str, Any]:
        return {}
