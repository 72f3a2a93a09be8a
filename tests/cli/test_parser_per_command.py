"""A run builds only its command's parser; what it parses is what the whole parser parses."""

from __future__ import annotations

import pytest

from ragingest.cli.args import COMMANDS, build_parser, command_of

ARGVS = [
    ["query", "альбом", "--persist-dir", "db", "--collection", "kb", "-k", "2", "--no-hybrid"],
    ["-v", "status", "--persist-dir", "db", "--collection", "kb", "--json"],
    ["ingest", "docs/", "--persist-dir", "db", "--collection", "kb", "--write-batch", "64"],
    ["inspect", "a.md", "--unit", "chars", "--chunk-size", "120"],
    ["trace", "вопрос", "--expect", "три дня", "--persist-dir", "db", "--collection", "kb"],
]


@pytest.mark.parametrize("argv", ARGVS, ids=lambda argv: command_of(argv) or "none")
def test_one_commands_parser_parses_as_the_whole_parser(argv):
    command = command_of(argv)
    assert command in COMMANDS
    assert vars(build_parser(command).parse_args(argv)) == vars(build_parser().parse_args(argv))


def test_the_command_is_the_first_word_that_is_not_an_option():
    assert command_of(["-v", "query", "text"]) == "query"
    assert command_of(["--help"]) is None
    assert command_of([]) is None


def test_an_unknown_command_builds_every_parser_to_list_them(capsys):
    with pytest.raises(SystemExit) as stop:
        build_parser("quer").parse_args(["quer", "x"])
    assert stop.value.code == 2
    assert "'ingest', 'watch', 'status', 'query', 'inspect', 'evaluate', 'trace'" in (
        capsys.readouterr().err
    )
