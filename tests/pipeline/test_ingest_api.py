"""``ragingest.ingest(sources, *, persist_dir, collection, **settings)``: a plain function that
stays one, and its settings by name (no model needed)."""

from __future__ import annotations

import inspect
import subprocess
import sys
from dataclasses import MISSING, fields, replace
from pathlib import Path

import pytest
from langchain_core.retrievers import BaseRetriever

import ragingest
from ragingest.defaults import EMBED_BATCH_SIZE, WRITE_BATCH_SIZE
from ragingest.loaders.cleaning.rules import CleaningRules
from ragingest.pipeline.api import make_options
from ragingest.pipeline.options import IngestOptions, RunSettings
from ragingest.retrieval import HeadingFirstRetriever
from ragingest.splitters.factory import SplitSettings
from tests.conftest import ROOT

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


def test_the_signature_shows_each_setting_the_dataclasses_declare():
    """``help(ragingest.ingest)`` lists every setting by name (no ``**settings``), each with
    its dataclass's annotation and default: derived from the fields, so a field added to
    ``RunSettings`` or ``SplitSettings`` is a keyword of ``ingest`` with nothing else to edit."""
    params = inspect.signature(ragingest.ingest).parameters
    assert list(params)[:3] == ["sources", "persist_dir", "collection"]
    kinds = {p.kind for name, p in params.items() if name != "sources"}
    assert kinds == {inspect.Parameter.KEYWORD_ONLY}
    declared = [*fields(RunSettings), *fields(SplitSettings)]
    assert set(params) == {"sources", "persist_dir", "collection", "options"} | {
        f.name for f in declared
    }
    for f in declared:
        assert params[f.name].annotation == f.type, f.name
        if f.default is not MISSING:
            assert params[f.name].default == f.default, f.name
    assert params["options"].default is None


def test_mypy_types_the_keywords_from_the_dataclasses(tmp_path):
    """A user's script through mypy (the repository's settings, its cache: warm after
    ``scripts/test.sh``'s mypy): right calls pass, a misspelt name, a wrong type and a
    missing store are errors on their own lines, and the report is typed."""
    script = tmp_path / "user_script.py"
    script.write_text(
        "from pathlib import Path\n"
        "import ragingest\n"
        "from ragingest.pipeline.options import IngestOptions\n"
        "from ragingest.pipeline.report import RunReport\n"
        "from ragingest.splitters.factory import SplitSettings\n"
        "paths = ['docs/']\n"
        "r: RunReport = ragingest.ingest(paths, persist_dir='db', collection='kb',\n"
        "                                rebuild=True, chunk_size=200)\n"
        "ragingest.ingest(sources=paths, persist_dir=Path('db'), collection='kb',\n"
        "                 split_levels=[2], split=SplitSettings(chunk_size=90),\n"
        "                 options=IngestOptions(Path('a'), 'b', wait=True))\n"
        "ragingest.ingest(paths, persist_dir='db', collection='kb', chunk_sise=200)  # 12\n"
        "ragingest.ingest(paths, persist_dir='db', collection='kb', rebuild='yes')  # 13\n"
        "ragingest.ingest(paths, collection='kb')  # 14\n"
        "n: int = ragingest.ingest(paths, persist_dir='db', collection='kb')  # 15\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary", str(script)],
        capture_output=True, text=True, cwd=ROOT, timeout=600,
    )  # fmt: skip
    errors = [line for line in done.stdout.splitlines() if ": error: " in line]
    lines = sorted(int(line.split(":")[1]) for line in errors)
    assert lines == [12, 13, 14, 15], done.stdout + done.stderr
    assert 'Unexpected keyword argument "chunk_sise"' in errors[0]
    assert 'Argument "rebuild" to "ingest" has incompatible type "str"' in errors[1]
    assert 'Missing named argument "persist_dir"' in errors[2]


def test_import_ragingest_imports_no_pipeline_and_ingest_no_run():
    """``import ragingest`` stays light; ``ragingest.ingest`` imports what its signature is
    built from (the options), a run's modules wait for the first call."""
    code = (
        "import sys, ragingest\n"
        "before = any(m.startswith('ragingest.pipeline') for m in sys.modules)\n"
        "ragingest.ingest\n"
        "print(before, 'ragingest.pipeline.options' in sys.modules,\n"
        "      'ragingest.pipeline.runner' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True", "False"]


def test_split_levels_take_any_sequence_and_keep_a_tuple():
    assert SplitSettings(split_levels=[2]).split_levels == (2,)
    assert SplitSettings(split_levels=[2]) == SplitSettings(split_levels=(2,))


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


def test_a_missing_store_is_refused_by_name(tmp_path):
    with pytest.raises(TypeError, match=r"^ingest\(\) missing a required argument: 'persist_dir'"):
        ragingest.ingest([tmp_path], collection="kb-docs")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"unknown option\(s\) \['chunk_sise'\]"):
        ragingest.ingest([tmp_path], persist_dir=tmp_path, collection="kb", chunk_sise=1)  # type: ignore[call-arg]


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


def test_batch_size_is_the_deprecated_name_of_embed_batch_size(tmp_path):
    """The model's batch is ``embed_batch_size`` (chunks per write: ``write_batch_size``);
    ``batch_size``, its old name, still works everywhere it did, with a DeprecationWarning."""
    assert "batch_size" not in inspect.signature(ragingest.ingest).parameters
    with pytest.warns(DeprecationWarning, match="batch_size is deprecated: it is embed_batch"):
        options = IngestOptions(tmp_path, "kb", batch_size=8)
    assert (options.embed_batch_size, options.write_batch_size) == (8, WRITE_BATCH_SIZE)
    with pytest.warns(DeprecationWarning):
        assert make_options(tmp_path, "kb", batch_size=5).embed_batch_size == 5
    with pytest.warns(DeprecationWarning):
        assert replace(options, batch_size=3).embed_batch_size == 3
    with pytest.warns(DeprecationWarning):
        assert options.batch_size == 8
    with pytest.warns(DeprecationWarning):
        options.batch_size = 9
    assert options.embed_batch_size == 9
    assert IngestOptions(tmp_path, "kb").embed_batch_size == EMBED_BATCH_SIZE
