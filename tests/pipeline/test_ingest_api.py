"""``ragingest.ingest(sources, *, persist_dir, collection, **settings)``: a plain function that
stays one, and its settings by name (no model needed)."""

from __future__ import annotations

import inspect
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest
from langchain_core.retrievers import BaseRetriever

import ragingest
from ragingest.loaders.cleaning import CleaningRules
from ragingest.pipeline.api import IngestSettings, make_options
from ragingest.pipeline.options import IngestOptions
from ragingest.retrieval import HeadingFirstRetriever
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



def test_the_keyword_settings_take_the_types_the_options_declare():
    """``IngestSettings`` is a TypedDict (what ``Unpack`` and an IDE read), so it names each
    field again: its types are the dataclasses' own, but ``split_levels`` takes any sequence
    (``make_options`` makes it a tuple)."""
    import typing

    declared = typing.get_type_hints(IngestOptions) | typing.get_type_hints(SplitSettings)
    differ = {
        name: hint
        for name, hint in typing.get_type_hints(IngestSettings).items()
        if hint != declared[name]
    }
    assert set(differ) == {"split_levels"}


def test_the_retriever_function_names_every_field_of_the_class():
    """``ragingest.retriever`` states each ``HeadingFirstRetriever`` field with its default,
    the server as the CLI's five ``chroma_*`` options."""
    params = inspect.signature(ragingest.retriever).parameters
    chroma = {name for name in params if name.startswith("chroma_")}
    assert chroma == {"chroma_host", "chroma_port", "chroma_token", "chroma_token_header",
                      "chroma_ssl"}  # fmt: skip
    inherited = set(BaseRetriever.model_fields)  # LangChain's name, tags, metadata
    fields_ = HeadingFirstRetriever.model_fields
    assert set(params) - chroma == set(fields_) - {"server"} - inherited
    for name, field in fields_.items():
        if name not in {"server", "collection", *inherited}:
            assert params[name].default == field.default, name


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
