"""A mistyped, missing or empty root never empties a collection: a missing path is refused
(API and CLI), and a run that would delete every recorded source or more than
``max_delete_share`` of them stops before changing anything, until confirmed (real model;
through the API into each built-in store, ``store_backend``; the CLI's into Chroma)."""

from __future__ import annotations

import functools
import json
import shutil
from pathlib import Path

import pytest

import ragingest
from ragingest.cli.main import main
from ragingest.cli.watch import watch
from ragingest.errors import EXIT_REFUSED, MassDeleteError, MissingPathError
from ragingest.pipeline.options import IngestOptions
from tests.stored import stored_count

pytestmark = pytest.mark.slow  # the real model, parser processes, Chroma on disk

TOPICS = ("отпуск", "пароль", "парковка", "столовая")


def _corpus(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i, topic in enumerate(TOPICS):
        (folder / f"{i}.md").write_text(f"# {topic}\n\nПравило про {topic} номер {i}.\n", "utf-8")
    return folder


def _count(persist: Path, collection: str, backend: str = "chroma") -> int:
    return stored_count(persist, collection, backend)


def _ingest(path, persist, backend: str = "chroma", **options):
    return ragingest.ingest(
        [path], persist_dir=persist, collection="kb-docs", progress=False, backend=backend,
        **options,
    )  # fmt: skip


def test_a_missing_path_is_refused_by_the_api(tmp_path, store_backend):
    docs, persist = _corpus(tmp_path / "corpus" / "docs"), tmp_path / "db"
    assert _ingest(docs, persist, store_backend).added == 4
    with pytest.raises(FileNotFoundError, match=r"no such file or folder: .*corpus/doc \("):
        _ingest(tmp_path / "corpus" / "doc", persist, store_backend)
    with pytest.raises(MissingPathError):
        _ingest(tmp_path / "corpus" / "doc", persist, store_backend)
    assert _count(persist, "kb-docs", store_backend) == 4


def test_an_empty_root_or_most_files_gone_is_refused_until_confirmed(tmp_path, store_backend):
    docs, persist = _corpus(tmp_path / "docs"), tmp_path / "db"
    _ingest(docs, persist, store_backend)
    count = functools.partial(_count, persist, "kb-docs", store_backend)
    aside = tmp_path / "aside"
    shutil.move(docs, aside)
    docs.mkdir()  # an unmounted share: the folder is there, empty
    with pytest.raises(MassDeleteError, match=r"delete 4 of the 4 sources .*every one of them"):
        _ingest(docs, persist, store_backend)
    assert count() == 4
    runs = (persist / "ragingest_runs.jsonl").read_text("utf-8").splitlines()
    assert json.loads(runs[-1])["status"] == "refused"

    for name in ("1.md", "2.md", "3.md"):  # three of four back: one would go (25 %)
        shutil.copy2(aside / name, docs / name)
    report = _ingest(docs, persist, store_backend)
    assert (report.files_deleted, report.deleted, count()) == (1, 1, 3)

    (docs / "1.md").unlink()
    (docs / "2.md").unlink()  # two of three (67 %): over the default half
    with pytest.raises(MassDeleteError, match=r"2 of the 3 sources .*over the limit of 50%"):
        _ingest(docs, persist, store_backend)
    assert count() == 3
    report = _ingest(docs, persist, store_backend, max_delete_share=0.7)
    assert (report.files_deleted, count()) == (2, 1)

    (docs / "3.md").unlink()
    report = _ingest(docs, persist, store_backend, allow_mass_delete=True)
    assert (report.files_deleted, report.refused, count()) == (1, "", 0)


def test_more_roots_than_before_move_keys_and_are_not_refused(tmp_path):
    hr, persist = _corpus(tmp_path / "hr"), tmp_path / "db"
    _ingest(hr, persist)
    it = _corpus(tmp_path / "it")
    report = ragingest.ingest([hr, it], persist_dir=persist, collection="kb-docs", progress=False)
    assert (report.files_deleted, _count(persist, "kb-docs")) == (4, 8)


def test_the_cli_exits_7_and_says_how_to_confirm(tmp_path, capsys):
    docs, persist = _corpus(tmp_path / "docs"), tmp_path / "db"
    common = ["--persist-dir", str(persist), "--collection", "kb-docs", "--no-progress"]
    assert main(["ingest", str(docs), *common]) == 0
    assert main(["ingest", str(tmp_path / "doc"), *common]) == 2
    assert "no such file or folder" in capsys.readouterr().err
    for path in docs.iterdir():
        path.unlink()
    report = tmp_path / "report.json"
    assert main(["ingest", str(docs), *common, "--report", str(report)]) == EXIT_REFUSED
    err = capsys.readouterr().err
    assert "refused" in err and "--allow-mass-delete" in err and "Nothing was changed" in err
    assert json.loads(report.read_text("utf-8"))["refused"].startswith("refused: this run")
    assert _count(persist, "kb-docs") == 4
    assert main(["ingest", str(docs), *common, "--max-delete-share", "1"]) == EXIT_REFUSED
    assert main(["ingest", str(docs), *common, "--allow-mass-delete"]) == 0
    assert _count(persist, "kb-docs") == 0


def test_a_watched_run_is_refused_too(tmp_path):
    docs, persist = _corpus(tmp_path / "docs"), tmp_path / "db"
    options = IngestOptions(persist, "kb-docs")
    assert watch([docs], options, 0.01, max_runs=1, sleep=lambda _s: None) == 0
    for path in docs.iterdir():
        path.unlink()
    assert watch([docs], options, 0.01, max_runs=2, sleep=lambda _s: None) == EXIT_REFUSED
    assert _count(persist, "kb-docs") == 4
