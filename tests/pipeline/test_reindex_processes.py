"""Scheduled re-indexing across processes: ``ragingest ingest`` subprocesses killed
with SIGKILL at random moments, and two concurrent runs on one collection."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from ragingest.cli.main import main
from ragingest.pipeline import runlog
from ragingest.pipeline.state import FileStates
from ragingest.vectorstore.chroma.store import chroma_client
from ragingest.vectorstore.records.aliases import resolve_collection
from ragingest.vectorstore.records.database import namespace
from ragingest.vectorstore.records.record_manager import record_manager
from tests.conftest import ROOT
from tests.pipeline.test_reindex import (
    ingest_args,
    make_corpus,
    paragraph,
    run_ingest,
    snapshot,
)

pytestmark = pytest.mark.slow

CLI = [sys.executable, "-m", "ragingest.cli.main"]


def start(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen(
        [*CLI, "-v", *args],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )


def read_until(proc: subprocess.Popen, wanted: str) -> str:
    """stderr lines of ``proc`` up to the first holding ``wanted`` (fails at EOF)."""
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if wanted in line:
            return "".join(seen)
    raise AssertionError(f"{wanted!r} never came; stderr:\n{''.join(seen)[-3000:]}")


def mutate(corpus: Path, rng: random.Random, history: dict[str, tuple[bytes, int]]) -> str:
    """One random change of the kind a scheduled folder sees; returns what it did."""
    files = sorted(corpus.glob("*.md"))
    target = rng.choice(files)
    op = rng.choice(["edit", "edit", "add", "delete", "touch", "revert"])
    if op == "delete" and len(files) <= 4:
        op = "edit"
    if op == "revert" and not any((corpus / name).exists() for name in history):
        op = "edit"
    if op in ("edit", "touch", "delete"):
        stat = target.stat()
        history[target.name] = (target.read_bytes(), stat.st_mtime_ns)
    if op == "edit":
        lines = target.read_text(encoding="utf-8").split("\n")
        long = [i for i, line in enumerate(lines) if len(line) > 100]
        lines[rng.choice(long)] = paragraph(rng, rng.randint(20, 60))
        target.write_text("\n".join(lines), encoding="utf-8")
    elif op == "add":
        name = f"new_{rng.randrange(10**6):06d}.md"
        parts = [f"# Новый {name}\n"]
        for s in range(rng.randint(1, 4)):
            parts += [f"## Часть {s}\n", paragraph(rng), "", paragraph(rng), ""]
        (corpus / name).write_text("\n".join(parts), encoding="utf-8")
        target = corpus / name
    elif op == "delete":
        target.unlink()
    elif op == "touch":
        os.utime(target, ns=(target.stat().st_atime_ns, target.stat().st_mtime_ns + 2 * 10**9))
    else:  # an earlier version comes back, bytes and mtime
        name = rng.choice(sorted(n for n in history if (corpus / n).exists()))
        data, mtime = history[name]
        target = corpus / name
        target.write_bytes(data)
        os.utime(target, ns=(mtime, mtime))
    return f"{op} {target.name}"


# A process that imports ragingest and loads the model once, then forks one child per request;
# the child runs the CLI's ``main(argv)`` exactly as ``python -m ragingest.cli.main`` would and
# is killed with SIGKILL by pid. It spares each of the many killed runs the interpreter start,
# the imports and the model load (seconds each), so the kills land in the writes. The parent
# never runs the model before forking (torch's thread pool is started in the children only).
FORK_SERVER = r"""
import json, os, sys, traceback
from ragingest.models.resolve import load_model_info, load_sentence_transformer
load_model_info(sys.argv[1]); load_sentence_transformer(sys.argv[1])
print("ready", flush=True)
for line in sys.stdin:
    request = json.loads(line)
    pid = os.fork()
    if pid == 0:
        code = 70
        try:
            os.dup2(os.open(request["stderr"], os.O_WRONLY), 2)
            os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
            from ragingest.cli.main import main
            code = main(request["argv"])
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stderr.flush()
            os._exit(code)
    print(pid, flush=True)
    sys.stdin.readline()  # reap only when told: until then the pid can't be reused
    print(os.waitpid(pid, 0)[1], flush=True)
"""


class ForkServer:
    def __init__(self, model: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", FORK_SERVER, model],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout.readline().strip() == "ready"

    def run_and_kill(self, argv: list[str], fifo: Path, delay: float) -> tuple[int, str]:
        """Run ``ragingest -v ARGV`` in a child; SIGKILL it ``delay`` seconds after it took
        the collection's lock (unless it finished first). Returns its wait status and stderr."""
        os.mkfifo(fifo)
        self.proc.stdin.write(json.dumps({"argv": ["-v", *argv], "stderr": str(fifo)}) + "\n")
        self.proc.stdin.flush()
        pid = int(self.proc.stdout.readline())
        with fifo.open(encoding="utf-8") as stderr:
            seen = []
            for line in stderr:
                seen.append(line)
                if "locked collection" in line:
                    break
            time.sleep(delay)  # a random moment of the run
            os.kill(pid, signal.SIGKILL)  # a zombie at worst: not reaped yet
            seen.append(stderr.read())
        fifo.unlink()
        self.proc.stdin.write("reap\n")
        self.proc.stdin.flush()
        return int(self.proc.stdout.readline()), "".join(seen)

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def test_sigkill_at_random_moments_then_rerun_equals_a_clean_run(tmp_path):
    rng = random.Random(20261129)
    corpus = make_corpus(tmp_path / "corpus", 6, seed=11)
    persist = tmp_path / "db"
    options = ["--write-batch", "3"]
    kills, done = [], []
    history: dict[str, tuple[bytes, int]] = {}
    window = 1.0  # kill within this many seconds of the lock; follows the runs' length
    server = ForkServer("intfloat/multilingual-e5-small")
    try:
        for attempt in range(40):
            if len(kills) >= 10:
                break
            change = mutate(corpus, rng, history)
            if len(kills) == 6 and "--rebuild" not in options:  # new settings, rebuilt under kills
                options += ["--chunk-size", "150", "--rebuild"]
            delay = rng.uniform(0.0, window)
            argv = ingest_args(corpus, persist, *options)
            status, stderr = server.run_and_kill(argv, tmp_path / f"run{attempt}.fifo", delay)
            if os.WIFSIGNALED(status):
                assert os.WTERMSIG(status) == signal.SIGKILL
                kills.append((change, round(delay, 3), stderr.count("wrote ")))
                window = min(window * 1.25, 8.0)
            else:
                assert os.WEXITSTATUS(status) == 0, stderr
                done.append(change)
                window = max(window * 0.6, 0.05)
    finally:
        server.close()
    assert len(kills) >= 10, (kills, done)

    final = run_ingest(corpus, persist, *options)  # the re-run after the last kill
    assert final["code"] == 0
    clean = tmp_path / "clean"
    run_ingest(corpus, clean, "--chunk-size", "150")

    got, want = snapshot(persist, embeddings=True), snapshot(clean, embeddings=True)
    assert sorted(got) == sorted(want), differences(got, want, kills, done)
    assert {k: row[:2] for k, row in got.items()} == {k: row[:2] for k, row in want.items()}
    for key, row in got.items():
        assert np.allclose(row[2], want[key][2], atol=1e-5), key
    physical = resolve_collection(persist, "kbase")
    assert physical == "kbase"  # rebuilt as kbase__1, then renamed back (``run.settle``)
    assert [c.name for c in chroma_client(persist).list_collections()] == [physical]
    manager = record_manager(persist, physical)
    assert sorted(manager.list_keys()) == sorted(got) and manager.journal_items() == []
    assert record_manager(persist, "kbase__1").count() == 0
    states = FileStates(persist, namespace(physical)).load()
    assert sorted(states) == sorted(p.name for p in corpus.glob("*.md"))
    again = run_ingest(corpus, persist, *options)
    assert (again["added"], again["deleted"], again["embeddings_computed"]) == (0, 0, 0)
    assert again["unchanged"] == len(states)


def differences(got: dict, want: dict, *context: object) -> str:
    """Per source: the chunks only one side has (for the failure message)."""
    lines = [repr(c) for c in context]
    for side, a, b in (("extra", got, want), ("missing", want, got)):
        for key in sorted(set(a) - set(b)):
            meta = a[key][1]
            lines.append(
                f"{side} {meta['source']} #{meta['chunk_index']}/{meta['total_chunks']} "
                f"{meta['doc_date']} {meta['content_hash']}"
            )
    return "\n".join(lines)


def test_two_concurrent_runs_second_fails_at_once_or_waits(tmp_path, capsys):
    corpus = make_corpus(tmp_path / "corpus", 4, seed=3)
    persist = tmp_path / "db"
    report_a, report_c = tmp_path / "a.json", tmp_path / "c.json"
    first = start([*ingest_args(corpus, persist), "--report", str(report_a)])
    try:
        read_until(first, "locked collection")
        os.kill(first.pid, signal.SIGSTOP)  # it holds the lock for as long as the test wants
        capsys.readouterr()
        # the second run in this process: the lock is the other process's all the same
        assert main(ingest_args(corpus, persist)) == 3
        refused = capsys.readouterr().err
        assert f"is being written by another ragingest run (pid {first.pid}," in refused
        assert "--wait" in refused
        waiting = start([*ingest_args(corpus, persist), "--wait", "--report", str(report_c)])
        read_until(waiting, f"waiting for another ragingest run (pid {first.pid},")
    finally:
        os.kill(first.pid, signal.SIGCONT)
    first.communicate(timeout=300)
    waiting.communicate(timeout=300)
    assert (first.returncode, waiting.returncode) == (0, 0)

    a = json.loads(report_a.read_text(encoding="utf-8"))
    c = json.loads(report_c.read_text(encoding="utf-8"))
    stored = snapshot(persist)
    assert a["added"] == len(stored) > 0
    assert (c["added"], c["deleted"], c["embeddings_computed"]) == (0, 0, 0)
    assert c["skipped"] == len(stored) and c["unchanged"] == 4
    clean = tmp_path / "clean"
    run_ingest(corpus, clean)
    assert stored == snapshot(clean)
    runs = runlog.read(persist / runlog.RUN_LOG, "kbase")
    assert [r["status"] for r in runs] == ["error", "ok", "ok"]
    assert "being written by another ragingest run" in runs[0]["error"]
    assert [r["pid"] for r in runs[1:]] == [first.pid, waiting.pid]
