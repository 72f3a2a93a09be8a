"""What ``--help`` states as a default is what the Python API does: the parser's defaults,
turned into options the way the commands turn them, equal the dataclasses' and functions'
own defaults (``ragingest.defaults`` is the one home of both)."""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path

import pytest

from ragingest import defaults, retriever
from ragingest.cli.args import build_parser
from ragingest.cli.run_options import ingest_options, split_settings
from ragingest.evaluate.runner import evaluate
from ragingest.evaluate.trace import trace
from ragingest.pipeline.options import IngestOptions
from ragingest.retrieval.query import search
from ragingest.splitters.factory import SplitSettings

STORE = ["--persist-dir", "db", "--collection", "kb"]


def parse(*argv: str):
    return build_parser().parse_args(list(argv))


def plain(value):
    return tuple(value) if isinstance(value, list) else value  # [] and () say the same


def default_of(function, name: str):
    return inspect.signature(function).parameters[name].default


def test_ingest_defaults_are_the_options_defaults(tmp_path):
    args = parse("ingest", str(tmp_path), *STORE)
    cli = ingest_options(args)
    api = IngestOptions(persist_dir=Path("db"), collection="kb")
    differ = {
        f.name
        for f in dataclasses.fields(IngestOptions)
        if plain(getattr(cli, f.name)) != plain(getattr(api, f.name))
    }
    assert differ == {"progress"}  # a terminal shows a progress bar; an app asks for one
    assert split_settings(parse("inspect", "f.md")) == SplitSettings()


@pytest.mark.parametrize(
    ("command", "option", "names"),
    [
        (["ingest", "p", *STORE], "--engine", defaults.ENGINES),
        (["inspect", "f.md"], "--strategy", defaults.STRATEGIES),
        (["inspect", "f.md"], "--unit", defaults.UNITS),
        (["query", "q", *STORE], "--fusion", defaults.FUSIONS),
        (["evaluate", "--corpus", "c", "--questions", "q"], "--search", defaults.EVALUATE_SEARCHES),
    ],
)
def test_choices_are_the_names_the_api_takes(command, option, names):
    dest = option.lstrip("-")
    assert [getattr(parse(*command, option, name), dest) for name in names] == list(names)
    with pytest.raises(SystemExit):
        parse(*command, option, "none-of-them")


def test_query_evaluate_and_trace_defaults_are_the_functions_defaults():
    query = parse("query", "q", *STORE)
    assert query.k == default_of(search, "k") == default_of(retriever, "k")
    assert query.hybrid is default_of(search, "hybrid") is default_of(retriever, "hybrid")
    assert query.fusion == default_of(search, "fusion") == default_of(retriever, "fusion")
    ev = parse("evaluate", "--corpus", "c", "--questions", "q.csv")
    assert (ev.k, ev.search) == (default_of(evaluate, "k"), default_of(evaluate, "search"))
    tr = parse("trace", "q", "--expect", "x", *STORE)
    assert (tr.k, tr.hybrid) == (default_of(trace, "k"), default_of(trace, "hybrid"))


def test_help_states_the_defaults(capsys):
    with pytest.raises(SystemExit):
        parse("ingest", "--help")
    text = " ".join(capsys.readouterr().out.split())
    assert f"default: {defaults.CHUNK_SIZE} tokens" in text
    assert f"default {defaults.MIN_CHUNK_SIZE};" in text
    assert f"(default {defaults.WRITE_BATCH_SIZE})" in text
    assert f"(default {defaults.MAX_FILE_MB})" in text


def test_write_batch_is_chunks_per_write_under_both_flag_names(tmp_path, capsys):
    for flag in ("--write-batch", "--batch-size"):
        options = ingest_options(parse("ingest", str(tmp_path), *STORE, flag, "7"))
        assert options.write_batch_size == 7
        assert options.embed_batch_size == IngestOptions(Path("db"), "kb").embed_batch_size
        said = capsys.readouterr().err
        deprecated = "ragingest: --batch-size is deprecated: it is --write-batch\n"
        assert said == (deprecated if flag == "--batch-size" else "")
    assert parse("ingest", "p", *STORE).write_batch == defaults.WRITE_BATCH_SIZE
