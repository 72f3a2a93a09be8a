"""What a LangChain developer trips over in a first trial: a missing file in ``inspect``, a
watch that never stops, the deleted sources nobody names, a progress bar in a log file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ragingest.cli.main import main
from ragingest.cli.watch import watch
from ragingest.pipeline.options import IngestOptions
from tests.conftest import ROOT

CLI = [sys.executable, "-m", "ragingest.cli.main"]
MODEL = "sentence-transformers/all-MiniLM-L6-v2"


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    return subprocess.run([*CLI, *args], cwd=cwd, capture_output=True, text=True, env=env)


@pytest.fixture
def docs(tmp_path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.md").write_text("# Отпуск\n\nОтпуск согласуют за две недели.\n", "utf-8")
    (root / "b.md").write_text("# Парковка\n\nПропуск выдаёт охрана.\n", "utf-8")
    return root


def test_inspect_of_a_missing_file_says_so_in_one_line(tmp_path, capsys):
    assert main(["inspect", str(tmp_path / "nosuch.md")]) == 2
    err = capsys.readouterr().err
    assert err == f"ragingest: {tmp_path / 'nosuch.md'}: no such file\n"


def test_inspect_of_a_fifo_names_the_reason(tmp_path, capsys):
    fifo = tmp_path / "pipe.md"
    os.mkfifo(fifo)
    assert main(["inspect", str(fifo)]) == 2
    assert (
        capsys.readouterr().err == f"ragingest: {fifo}: a FIFO (named pipe), not a regular file\n"
    )


def test_watch_counts_every_check_also_when_nothing_changed(docs, tmp_path):
    options = IngestOptions(tmp_path / "db", "kbase", model=MODEL, progress=False)
    sleeps, reports = [], []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        if len(sleeps) > 3:
            raise RuntimeError("watch did not stop after --max-runs checks")

    assert watch([docs], options, 0.01, max_runs=3, on_report=reports.append, sleep=sleep) == 0
    assert sleeps == [0.01, 0.01]  # three checks, two waits between them
    assert len(reports) == 1  # only the first check found something to ingest


def test_the_report_names_the_deleted_sources_and_no_bar_reaches_a_pipe(docs, tmp_path, capsys):
    store = ["--persist-dir", str(tmp_path / "db"), "--collection", "kb", "--model", MODEL]
    first = _run("ingest", str(docs), *store, cwd=tmp_path)  # stderr is a pipe here
    assert first.returncode == 0, first.stderr
    assert (
        "\r" not in first.stderr and "file/s" not in first.stderr and "ingest:" not in first.stderr
    )
    assert first.stdout.startswith("files: 2 ingested")  # the summary stays
    (docs / "b.md").unlink()
    report = tmp_path / "report.json"
    capsys.readouterr()
    # what the summary and the report say: in process (the pipe was the first run's point)
    assert main(["ingest", str(docs), *store, "--report", str(report)]) == 0
    assert "DELETED b.md: gone from the roots, 1 chunks" in capsys.readouterr().out.splitlines()
    data = json.loads(report.read_text("utf-8"))
    assert data["deleted_sources"] == [{"path": "b.md", "chunks": 1}]
    assert (data["files_deleted"], data["deleted"]) == (1, 1)
