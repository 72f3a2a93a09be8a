"""LangChain's standard ``VectorStore`` suite (langchain-tests, what every partner store runs)
on what ``open_store`` returns: add with and without ids, upsert, delete, ``get_by_ids`` and
search, sync and async, over Chroma on disk with LangChain's deterministic fake embeddings."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_tests.integration_tests import VectorStoreIntegrationTests

from ragingest.vectorstore.collection import Collection
from ragingest.vectorstore.opening import open_store


class FakeModel(DeterministicFakeEmbedding):
    """The fake embeddings with the identity a collection records."""

    model_name: str = "deterministic-fake"
    fingerprint: str = "deterministic-fake-6"


class TestCollectionStandard(VectorStoreIntegrationTests):
    @pytest.fixture
    def vectorstore(self, tmp_path: Path) -> Collection:
        """An empty collection, a new one per test."""
        return open_store(tmp_path, f"std-{uuid.uuid4().hex[:8]}", FakeModel(size=6))
