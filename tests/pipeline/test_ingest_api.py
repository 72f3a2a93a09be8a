"""``ragingest.ingest(sources, *, persist_dir, collection, **options)``: the callable package and
its options by name (no model needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

import ragingest
from ragingest.loaders.cleaning import CleaningRules
from ragingest.pipeline.api import make_options


def test_the_package_is_callable_and_keeps_its_modules():
    from ragingest.cli import main as cli

    assert callable(ragingest.ingest)
    assert cli.main is ragingest.cli.main.main


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
