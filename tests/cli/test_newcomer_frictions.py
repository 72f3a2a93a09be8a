"""What a newcomer trips over first: names Chroma refuses, a mistyped directory, settings shown
as ``None``, a file of an unknown format skipped without a word, a CSV column lost."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
from pathlib import Path

import pytest

from ragingest.cli.main import main
from ragingest.loaders.records import catalogue_documents, faq_document
from ragingest.vectorstore.names import is_safe, safe_name
from tests.conftest import EXAMPLES

pytestmark = pytest.mark.slow



def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``ragingest ARGS`` in ``cwd``, through ``cli.main.main`` in this process (these tests
    are about what the commands say, not about a process: a subprocess each would spend
    seconds on imports and the model load); its exit code, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    here = Path.cwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as exc:  # argparse's refusals
                code = exc.code if isinstance(exc.code, int) else 2
    finally:
        os.chdir(here)
    return subprocess.CompletedProcess(["ragingest", *args], code, out.getvalue(), err.getvalue())


@pytest.mark.parametrize(
    ("name", "physical"),
    [
        ("examples", "examples"),
        ("kb", "kb-9ffc1b20"),
        ("отпуск", "otpusk-e5d63053"),
        ("my docs", "my-docs-0ee957bd"),
        ("my-docs", "my-docs"),
        ("a..b", "a.b-80a0fd92"),
        ("192.168.0.1", "192.168.0.1-4fe9b1e6"),
    ],
)
def test_every_name_maps_to_a_stable_chroma_safe_name(name, physical):
    assert safe_name(name) == physical
    assert is_safe(physical)


def test_an_empty_name_is_refused_with_an_example():
    with pytest.raises(ValueError, match=r"--collection NAME, e\.g\. kb"):
        safe_name(" ")


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("frictions")
    docs = root / "docs"
    docs.mkdir()
    (docs / "memo.md").write_bytes((EXAMPLES / "library_memo.md").read_bytes())
    (docs / "a.xyz").write_text("what is this?", encoding="utf-8")
    return root


@pytest.mark.parametrize("name", ["kb", "отпуск", "my docs"])
def test_a_short_or_odd_name_works_for_ingest_query_status_and_rebuild(folder, name):
    store = ["--persist-dir", "db", "--collection", name]
    first = _run("ingest", "docs", *store, "--no-progress", cwd=folder)
    assert first.returncode == 0, first.stderr
    hit = _run("query", "альбом с красной наклейкой", *store, "-k", "1", cwd=folder)
    assert hit.returncode == 0, hit.stderr
    assert hit.stdout.startswith("1. score") and "memo.md" in hit.stdout
    status = _run("status", *store, cwd=folder)
    assert status.returncode == 0, status.stderr
    assert status.stdout.startswith(f"collection: {name} (Chroma collection {safe_name(name)})")
    rebuilt = _run("ingest", "docs", *store, "--chunk-size", "60", "--rebuild", cwd=folder)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert f"rebuilt: Chroma collection {safe_name(name)} now serves it" in rebuilt.stdout
    again = _run("query", "альбом с красной наклейкой", *store, "-k", "1", cwd=folder)
    assert again.returncode == 0 and "memo.md" in again.stdout, again.stderr


def test_an_unsupported_file_is_counted_as_skipped_with_its_reason(folder):
    done = _run(
        "ingest", "docs", "--persist-dir", "db2", "--collection", "docs", "--no-progress",
        "--report", "report.json", cwd=folder,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = "1 ingested (0 unchanged, not parsed), 0 failed, 0 partly, 1 skipped, 2 seen"
    assert summary in done.stdout
    assert "SKIPPED a.xyz: no loader for .xyz (supported: " in done.stdout
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    assert report["files_skipped"] == 1
    skipped = [f for f in report["files"] if f["path"] == "a.xyz"]
    assert skipped[0]["status"] == "unsupported" and "no loader for .xyz" in skipped[0]["error"]


@pytest.mark.parametrize("command", ["query", "status"])
def test_query_and_status_refuse_a_missing_directory_and_create_nothing(tmp_path, command):
    missing = tmp_path / "nonexistent"
    args = ["query", "x"] if command == "query" else ["status"]
    done = _run(*args, "--persist-dir", str(missing), "--collection", "kb", cwd=tmp_path)
    assert done.returncode == 2
    assert f"no such directory: {missing}" in done.stderr
    assert not missing.exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    done = _run(*args, "--persist-dir", str(empty), "--collection", "kb", cwd=tmp_path)
    assert done.returncode == 2 and "holds no Chroma collection" in done.stderr
    assert list(empty.iterdir()) == []


def test_settings_are_shown_with_their_effective_values(folder):
    store = ["--persist-dir", "db3", "--collection", "kb"]
    assert _run("ingest", "docs/memo.md", *store, "--no-progress", cwd=folder).returncode == 0
    status = _run("status", *store, cwd=folder).stdout
    assert "splitter: chunk_overlap=0 (default), chunk_size=200 (default), " in status
    refused = _run("ingest", "docs/memo.md", *store, "--chunk-size", "400", cwd=folder)
    assert refused.returncode == 2
    assert "(chunk_size: 200 (default) -> 400)" in refused.stderr
    assert "None" not in refused.stderr + status


def test_every_catalogue_column_reaches_the_text_and_metadata(tmp_path):
    header = ["Название", "category", "Цена", "Описание"]
    rows = [["Тур в Сочи", "отпуск", "45 990", "x" * 300]]
    (tmp_path / "c.csv").touch()
    (card,) = catalogue_documents(tmp_path / "c.csv", tmp_path, header, rows)
    assert card.page_content.startswith("Название: Тур в Сочи\ncategory: отпуск\nЦена: 45 990\n")
    assert {k: card.metadata.get(k) for k in ("название", "category", "цена", "price")} == {
        "название": "Тур в Сочи",
        "category": "отпуск",
        "цена": 45990,
        "price": 45990,
    }
    assert "описание" not in card.metadata  # a long description: in the card text only


def test_every_faq_column_reaches_the_text(tmp_path):
    header = ["Вопрос", "Ответ", "category"]
    rows = [["Как уйти в отпуск?", "Заявление за две недели.", "отпуск"]]
    (tmp_path / "f.csv").touch()
    document = faq_document(tmp_path / "f.csv", tmp_path, header, rows)
    assert document.page_content == (
        "## Как уйти в отпуск?\n\nЗаявление за две недели.\n\ncategory: отпуск\n"
    )
