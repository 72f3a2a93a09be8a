"""Broken stores and interrupts, through the real CLI in its own process: one line each on
stderr saying what to do, no traceback, an exit code per fault (4 read-only, 5 damaged,
6 disk full, 130 interrupted); query, status and the retriever still read a read-only store
or one on a full disk; --rebuild
repairs a damaged Chroma database; an interrupted run is finished by the next one."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ragingest.cli.main import main
from tests.conftest import ROOT
from tests.helpers import ingest_cli

pytestmark = pytest.mark.slow

MODEL = "sentence-transformers/all-MiniLM-L6-v2"  # these runs are about stores, not ranking
CLI = [sys.executable, "-m", "ragingest.cli.main"]
ROOT_USER = os.geteuid() == 0


def _can_mount() -> bool:
    if not ROOT_USER or shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    return probe.returncode == 0


MOUNTS = _can_mount()


def cli(
    *args: str,
    read_only: Path | None = None,
    tmpfs: tuple[Path, str] | None = None,
    full: tuple[Path, Path] | None = None,
    command: list[str] | None = None,
):
    """Run ``ragingest ARGS`` (or ``command``); with ``read_only`` that folder is a read-only
    bind mount (or without write permission when not root), with ``tmpfs`` a folder is a small
    tmpfs, with ``full=(store, folder)`` a copy of ``store`` at ``folder/store`` on a tmpfs
    filled to its last byte."""
    command = command or [*CLI, *args]
    if full is not None:
        store, folder = full
        mount = (
            f"mount -t tmpfs -o size=2m tmpfs {folder} && cp -a {store} {folder}/store && "
            f"(dd if=/dev/zero of={folder}/filler bs=4k 2>/dev/null; true)"
        )
        command = ["unshare", "-m", "sh", "-c", f'{mount} && exec "$@"', "sh", *command]
    if read_only is not None and MOUNTS:
        mount = f"mount --bind {read_only} {read_only} && mount -o remount,bind,ro {read_only}"
        command = ["unshare", "-m", "sh", "-c", f'{mount} && exec "$@"', "sh", *command]
    if tmpfs is not None:
        folder, size = tmpfs
        mount = f"mount -t tmpfs -o size={size} tmpfs {folder}"
        command = ["unshare", "-m", "sh", "-c", f'{mount} && exec "$@"', "sh", *command]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)


def store_args(persist: Path) -> list[str]:
    return ["--persist-dir", str(persist), "--collection", "kbase"]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("faults")
    corpus = base / "docs"
    corpus.mkdir()
    (corpus / "album.md").write_text(
        "# Альбомы\n\nАльбом с репродукциями выдают на три дня в читальный зал.\n", "utf-8"
    )
    persist = base / "db"
    assert ingest_cli(corpus, persist, "kbase", "--model", MODEL) == 0  # in process: a setup
    return corpus, persist


def one_line(stderr: str) -> str:
    assert "Traceback" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if line.startswith("ragingest: ")]
    return lines[-1]


@pytest.mark.skipif(ROOT_USER and not MOUNTS, reason="root writes anywhere and can't mount")
def test_read_only_store_refuses_ingest_in_one_line_and_still_answers(built, tmp_path):
    corpus, persist = built
    if not ROOT_USER:
        for path in (persist, *persist.rglob("*")):
            path.chmod(path.stat().st_mode & ~0o222)
    try:
        report = tmp_path / "report.json"
        args = ("ingest", str(corpus), *store_args(persist), "--no-progress")
        ingest = cli(*args, "--report", str(report), read_only=persist)
        assert ingest.returncode == 4, ingest.stderr
        assert one_line(ingest.stderr) == (
            f"ragingest: the store {persist} is read-only; ingest must write there (make it "
            "writable or pass another --persist-dir); query and status only read it"
        )
        assert json.loads(report.read_text("utf-8"))["error"].startswith("the store ")
        query = cli("query", "альбом на три дня", *store_args(persist), "--json", read_only=persist)
        assert query.returncode == 0, query.stderr
        assert [h["metadata"]["source"] for h in json.loads(query.stdout)] == ["album.md"]
        status = cli("status", *store_args(persist), "--json", read_only=persist)
        assert status.returncode == 0, status.stderr
        assert json.loads(status.stdout)["chunks"] == 1
        assert json.loads(status.stdout)["persist_dir"] == str(persist)
    finally:
        if not ROOT_USER:
            for path in (persist, *persist.rglob("*")):
                path.chmod(path.stat().st_mode | 0o200)


def test_damaged_chroma_database_is_named_and_rebuild_repairs_it(built, tmp_path):
    corpus, original = built
    persist = tmp_path / "db"
    shutil.copytree(original, persist)
    database = persist / "chroma.sqlite3"
    database.write_bytes(database.read_bytes()[: database.stat().st_size // 3])
    message = (
        f"ragingest: the Chroma database {persist}/chroma.sqlite3 is damaged (database disk "
        "image is malformed); run the same ingest with --rebuild: it sets the damaged files "
        "aside and rebuilds the index from your files"
    )
    status = cli("status", *store_args(persist))
    assert (status.returncode, one_line(status.stderr)) == (5, message)
    args = ("ingest", str(corpus), *store_args(persist), "--no-progress", "--model", MODEL)
    ingest = cli(*args)
    assert (ingest.returncode, one_line(ingest.stderr)) == (5, message)
    repaired = cli(*args, "--rebuild")
    assert repaired.returncode == 0, repaired.stderr
    assert "the Chroma database was damaged: set aside as " in repaired.stderr
    assert "chroma.sqlite3.damaged-" in repaired.stderr
    assert len(list(persist.glob("chroma.sqlite3.damaged-*"))) == 1  # kept, not deleted
    query = cli("query", "альбом", *store_args(persist), "--json")
    assert [h["metadata"]["source"] for h in json.loads(query.stdout)] == ["album.md"]


@pytest.mark.skipif(not MOUNTS, reason="needs a private mount namespace for a small tmpfs")
def test_disk_full_is_said_in_one_line_and_the_report_still_written(tmp_path):
    corpus = tmp_path / "docs"
    corpus.mkdir()
    for i in range(6):
        words = " ".join(f"слово{i}_{j}" for j in range(3000))
        (corpus / f"doc{i}.md").write_text(f"# Документ {i}\n\n{words}\n", "utf-8")
    full = tmp_path / "full"
    full.mkdir()
    report = tmp_path / "report.json"  # outside the full disk: it can be written
    args = ("ingest", str(corpus), *store_args(full / "db"), "--no-progress", "--model", MODEL)
    run = cli(*args, "--report", str(report), tmpfs=(full, "600k"))
    assert run.returncode == 6, run.stderr
    line = one_line(run.stderr)
    assert line.startswith(f"ragingest: the disk of {full}/db is full (")
    assert line.endswith("MB free); free some space and run again: the next run finishes the "
                         "work (nothing half-written is kept)")  # fmt: skip
    assert json.loads(report.read_text("utf-8"))["error"] == line.removeprefix("ragingest: ")


@pytest.mark.skipif(not MOUNTS, reason="needs a private mount namespace for a small tmpfs")
def test_a_store_on_a_full_disk_is_still_read(built, tmp_path):
    _, persist = built
    folder = tmp_path / "full"
    folder.mkdir()
    store = folder / "store"  # exists inside the namespace only
    query = cli("query", "альбом на три дня", *store_args(store), "--json", full=(persist, folder))
    assert query.returncode == 0, query.stderr
    assert [h["metadata"]["source"] for h in json.loads(query.stdout)] == ["album.md"]
    status = cli("status", *store_args(store), "--json", full=(persist, folder))
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["chunks"] == 1
    assert json.loads(status.stdout)["persist_dir"] == str(store)
    script = (
        "import shutil, ragingest\n"
        f"assert shutil.disk_usage({str(folder)!r}).free == 0\n"
        f"found = ragingest.retriever({str(store)!r}, 'kbase', k=1).invoke('альбом')\n"
        "print(found[0].metadata['source'])\n"
    )
    api = cli(command=[sys.executable, "-c", script], full=(persist, folder))
    assert api.returncode == 0, api.stderr
    assert api.stdout.split() == ["album.md"]


def _default_sigint() -> None:
    """A terminal's Ctrl-C: even when this test runs in a background job (SIGINT ignored,
    and a child inherits that), the CLI gets the default disposition."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_stops_with_one_line_and_exit_130_and_the_next_run_finishes(tmp_path):
    corpus = tmp_path / "docs"
    corpus.mkdir()
    for i in range(200):
        (corpus / f"doc{i:03d}.md").write_text(
            f"# Раздел {i}\n\nАбзац номер {i} о выдаче книг и альбомов читателям.\n", "utf-8"
        )
    persist = tmp_path / "db"
    args = ["ingest", str(corpus), *store_args(persist), "--no-progress", "--write-batch", "8"]
    process = subprocess.Popen(
        [*CLI, "-v", *args, "--model", MODEL], cwd=ROOT, stderr=subprocess.PIPE, text=True,
        stdout=subprocess.DEVNULL, preexec_fn=_default_sigint,
    )  # fmt: skip
    seen = []
    for line in process.stderr:  # interrupt once a write is done: mid-run, mid-write
        seen.append(line)
        if "wrote " in line:
            break
    process.send_signal(signal.SIGINT)
    rest = process.stderr.read()
    code = process.wait(timeout=60)
    stderr = "".join(seen) + rest
    assert code == 130, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    assert rest.strip().splitlines()[-1] == "ragingest: interrupted; the next run finishes the work"
    # the next run in this process: what it finishes is the point, not how it exits
    assert main([*args, "--model", MODEL, "--report", str(tmp_path / "r.json")]) == 0
    report = json.loads((tmp_path / "r.json").read_text("utf-8"))
    assert report["failed"] == 0 and len(report["files"]) == 200
