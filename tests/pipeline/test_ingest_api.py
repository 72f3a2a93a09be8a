"""``ragingest.ingest(sources, *, persist_dir, collection, **settings)``: a plain function that
stays one, and its settings by name (no model needed)."""

from __future__ import annotations

import inspect
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest

import ragingest
from ragingest.loaders.cleaning import CleaningRules
from ragingest.pipeline.api import IngestSettings, make_options
from ragingest.pipeline.options import IngestOptions
from ragingest.retrieval.retriever import RetrieverSettings
from ragingest.retrieval.retriever import retriever as chunk_retriever
from ragingest.splitters.factory import SplitSettings

pytestmark = pytest.mark.slow


def test_ingest_and_retriever_are_functions_after_every_package_is_imported():
    code = (
        "import inspect, pkgutil, importlib, ragingest\n"
        "for m in pkgutil.walk_packages(ragingest.__path__, 'ragingest.'):\n"
        "    importlib.import_module(m.name)\n"
        "print(inspect.isfunction(ragingest.ingest), inspect.isfunction(ragingest.retriever))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True"]


def test_the_signatures_name_every_setting():
    params = inspect.signature(ragingest.ingest).parameters
    assert list(params) == ["sources", "persist_dir", "collection", "options", "settings"]
    assert params["settings"].annotation == "Unpack[IngestSettings]"
    run_names = {f.name for f in fields(IngestOptions)} - {"persist_dir", "collection"}
    split_names = {f.name for f in fields(SplitSettings)}
    assert set(IngestSettings.__annotations__) == run_names | split_names
    keywords = set(inspect.signature(chunk_retriever).parameters) - {"persist_dir", "collection"}
    assert set(RetrieverSettings.__annotations__) == keywords


def test_options_by_name(tmp_path):
    options = make_options(
        tmp_path, "kb-docs", chunk_size=120, min_chunk_size=0, rebuild=True, split_levels=[2]
    )
    assert options.persist_dir == Path(tmp_path)
    assert options.collection == "kb-docs"
    assert (options.split.chunk_size, options.split.min_chunk_size) == (120, 0)
    assert options.split.split_levels == (2,)
    assert options.rebuild is True
    assert options.cleaning == CleaningRules()


def test_a_whole_options_object_gets_the_arguments(tmp_path):
    base = make_options(tmp_path / "a", "first", chunk_size=90)
    options = make_options(tmp_path / "b", "second", base, wait=True)
    assert (options.persist_dir, options.collection) == (tmp_path / "b", "second")
    assert (options.split.chunk_size, options.wait) == (90, True)


def test_unknown_options_are_refused_with_the_known_ones(tmp_path):
    with pytest.raises(TypeError, match=r"unknown option\(s\) \['chunk_sise'\]; run options: .*"):
        make_options(tmp_path, "kb-docs", chunk_sise=100)


def test_unknown_source_kinds_are_refused(tmp_path):
    with pytest.raises(TypeError, match="cannot ingest int 7"):
        ragingest.ingest([7], persist_dir=tmp_path, collection="kb-docs")


def test_document_sources_need_the_local_engine(tmp_path):
    from langchain_core.documents import Document

    with pytest.raises(ValueError, match="the ray engine reads files only"):
        ragingest.ingest(
            [[Document(page_content="Т", metadata={"source": "t"})]],
            persist_dir=tmp_path,
            collection="kb-docs",
            engine="ray",
        )
