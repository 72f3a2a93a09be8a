"""``cli.loader_specs``: ``--loader MODULE:CLASS --loader-arg K=V`` and ``[[sources]]``."""

from __future__ import annotations

import argparse
import warnings

import pytest

from ragingest.cli.loader_specs import (
    LoaderSpec,
    LoaderSpecError,
    add_loader_args,
    cli_sources,
    config_sources,
    import_loader,
    parse_value,
)

warnings.filterwarnings(
    "ignore", message=".*langchain-community.*sunset", category=DeprecationWarning
)
community = pytest.importorskip("langchain_community.document_loaders")


def test_import_loader_full_and_bare_names():
    assert import_loader("langchain_community.document_loaders:CSVLoader") is community.CSVLoader
    assert import_loader("TextLoader") is community.TextLoader
    assert (
        import_loader("ragingest.loaders:TextLoader").__module__ == "ragingest.loaders.formats.text"
    )


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("no_such_module_x:Loader", "cannot import no_such_module_x"),
        ("NoSuchLoader", "langchain_community.document_loaders has no NoSuchLoader"),
        ("pathlib:Path", "Path is not a LangChain BaseLoader"),
        ("pathlib:", "write MODULE:CLASS"),
    ],
)
def test_import_loader_errors_say_what_to_do(target, message):
    with pytest.raises(LoaderSpecError, match=message):
        import_loader(target)


def test_build_names_bad_arguments(tmp_path):
    with pytest.raises(
        LoaderSpecError, match=r"loader TextLoader: cannot build it with \{'nope': 1\}"
    ):
        LoaderSpec("TextLoader", {"nope": 1}).build()


def test_values_are_json_when_they_parse():
    assert [parse_value(v) for v in ("42", "true", '["a", "b"]', "notes.txt", "")] == [
        42,
        True,
        ["a", "b"],
        "notes.txt",
        "",
    ]


def _parse(argv):
    parser = argparse.ArgumentParser()
    add_loader_args(parser)
    return parser.parse_args(argv)


def test_loader_args_belong_to_the_preceding_loader():
    args = _parse(
        [
            "--loader",
            "TextLoader",
            "--loader-arg",
            "file_path=a.txt",
            "--loader-arg",
            "autodetect_encoding=true",
            "--loader",
            "CSVLoader",
            "--loader-arg",
            "file_path=b.csv",
        ]
    )
    assert args.loaders == [
        LoaderSpec("TextLoader", {"file_path": "a.txt", "autodetect_encoding": True}),
        LoaderSpec("CSVLoader", {"file_path": "b.csv"}),
    ]
    with pytest.raises(SystemExit):
        _parse(["--loader-arg", "file_path=a.txt"])
    with pytest.raises(SystemExit):
        _parse(["--loader", "TextLoader", "--loader-arg", "file_path"])


def test_config_sources_resolve_against_the_config_folder(tmp_path):
    (tmp_path / ".ragingest.toml").write_text(
        '[content_types]\n"faq/*.md" = "faq"\n\n'
        '[[sources]]\nloader = "TextLoader"\n'
        'args = { file_path = "notes/a.txt", encoding = "utf-8" }\n\n'
        '[[sources]]\npath = "docs"\n',
        encoding="utf-8",
    )
    assert config_sources(tmp_path) == [
        LoaderSpec(
            "TextLoader",
            {"file_path": str(tmp_path / "notes/a.txt"), "encoding": "utf-8"},
            trusted=False,
        ),
        tmp_path / "docs",
    ]
    assert config_sources(tmp_path / "nowhere") == []


def test_config_sources_refuse_bad_entries(tmp_path):
    (tmp_path / ".ragingest.toml").write_text('[[sources]]\nloader = "TextLoader"\npath = "x"\n')
    with pytest.raises(LoaderSpecError, match="entry 1: give exactly one of loader"):
        config_sources(tmp_path)


def test_cli_sources_reads_the_operators_config_and_builds_loaders(tmp_path, monkeypatch):
    (tmp_path / "a.txt").write_text("Текст.", encoding="utf-8")
    (tmp_path / ".ragingest.toml").write_text(
        '[[sources]]\nloader = "TextLoader"\nargs = { file_path = "a.txt" }\n', encoding="utf-8"
    )
    loaders = [LoaderSpec("CSVLoader", {"file_path": "b.csv"})]
    assert cli_sources([str(tmp_path)], [])[0] == str(tmp_path)  # a root's config: not read
    sources = cli_sources([str(tmp_path)], loaders, tmp_path / ".ragingest.toml")
    assert sources[0] == str(tmp_path)
    assert isinstance(sources[1], community.TextLoader)
    assert sources[1].file_path == str(tmp_path / "a.txt")
    assert isinstance(sources[2], community.CSVLoader)
    monkeypatch.chdir(tmp_path)
    (only,) = cli_sources([], [])  # a cron line run in the folder: its [[sources]]
    assert isinstance(only, community.TextLoader)
