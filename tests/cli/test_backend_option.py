"""``--backend`` (ingest, watch, query, status) names the store through the registry, and the
command line and the run name no Chroma object (``vectorstore.backends``): checked on the
source, so a new backend needs its folder and one registry entry."""

from __future__ import annotations

import ast
import sqlite3
from pathlib import Path

import pytest

from ragingest.cli.args import build_parser
from ragingest.cli.main import main
from ragingest.cli.run_options import ingest_options
from ragingest.vectorstore import backends
from tests.conftest import EXAMPLES, ROOT

STORE = ["--persist-dir", "db", "--collection", "kb"]


def test_ingest_takes_the_backend_into_its_options(tmp_path):
    args = build_parser().parse_args(["ingest", str(tmp_path), *STORE])
    assert args.backend == "chroma"
    assert ingest_options(args).backend == "chroma"
    args = build_parser().parse_args(["ingest", str(tmp_path), *STORE, "--backend", "memory"])
    assert ingest_options(args).backend == "memory"


@pytest.mark.parametrize("command", [["status"], ["query", "q"], ["watch", "p"]])
def test_an_unknown_backend_is_a_usage_error(command, capsys):
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args([*command, *STORE, "--backend", "nope"])
    assert exit_.value.code == 2
    assert "--backend: must be one of chroma, memory" in capsys.readouterr().err


def test_server_options_of_another_backend_are_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(backends.BUILT_IN, "plain", f"{__name__}:plain")
    argv = ["status", "--persist-dir", str(tmp_path), "--collection", "kb"]
    code = main([*argv, "--backend", "plain", "--chroma-host", "127.0.0.1"])
    assert code == 2
    assert "the plain backend keeps no collections on a server" in capsys.readouterr().err


def plain(persist_dir, server=None):
    """A kind registered by a plain function: no server options, no files, no upkeep."""
    return backends.open_backend(persist_dir, server, kind="chroma")


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
        elif isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
    return names


def test_the_run_and_the_command_line_import_nothing_of_chroma():
    """pipeline/ (but the writer, which gets its store as a value) and cli/ reach the store
    through ``backends`` and ``port`` only."""
    folders = [ROOT / "ragingest" / "pipeline", ROOT / "ragingest" / "cli"]
    files = [p for f in folders for p in sorted(f.glob("*.py")) if p.name != "writer.py"]
    naming = {
        p.relative_to(ROOT).as_posix(): sorted(
            n for n in _imports(p) if "chroma" in n.split(".") or "chromadb" in n
        )
        for p in files
    }
    assert {path: names for path, names in naming.items() if names} == {}


@pytest.mark.slow
def test_a_directory_of_one_backend_is_refused_to_another(tmp_path, capsys):
    """A memory run in a Chroma directory would find Chroma's collections absent and drop
    their lexical indexes, records and parents: it is refused (exit 2), and the reverse too."""
    chroma, memory = tmp_path / "chroma_db", tmp_path / "memory_db"
    memo = str(EXAMPLES / "library_memo.md")
    assert main(["ingest", memo, "--persist-dir", str(chroma), "--collection", "kb"]) == 0
    lexical = sqlite3.connect(chroma / "ragingest_lexical.sqlite")
    tables = lexical.execute("SELECT name FROM sqlite_master").fetchall()
    argv = ["ingest", memo, "--collection", "other", "--backend", "memory", "--persist-dir"]
    assert main([*argv, str(chroma)]) == 2
    assert "holds the collections of the 'chroma' backend, not 'memory'" in capsys.readouterr().err
    assert lexical.execute("SELECT name FROM sqlite_master").fetchall() == tables
    assert main([*argv, str(memory)]) == 0
    assert (memory / "ragingest_backend.txt").read_text() == "memory\n"
    assert main(["status", "--persist-dir", str(memory), "--collection", "other"]) == 2
    assert "holds the collections of the 'memory' backend, not 'chroma'" in capsys.readouterr().err
