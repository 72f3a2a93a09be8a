"""The parser's whole process tree is bounded: a child it starts (pandoc, for EPUB/ODT/RTF)
dies with the worker on a timeout, and counts against the memory bound; the memory bound has
a default (the smaller of 2 GB and half the machine's memory)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ragingest.cli.args import build_parser
from ragingest.cli.run_options import ingest_options
from ragingest.errors import FileMemoryError, FileTimeoutError
from ragingest.loaders.process.bounded import DEFAULT_FILE_MEMORY_MB, ParserPool
from ragingest.loaders.process.process_tree import resident_bytes, tree_resident_bytes
from ragingest.pipeline.options import IngestOptions


def start_child_and_wait(pid_file: str, *child: str) -> None:
    """A parser that starts a child process (as unstructured starts pandoc) and hangs."""
    process = subprocess.Popen(list(child) or ["sleep", "600"])
    Path(pid_file).write_text(str(process.pid))
    time.sleep(600)


def own_resident_bytes() -> int:
    return resident_bytes(os.getpid()) or 0


def alive(pid: int) -> bool:
    """Running (a zombie waiting for its reaper counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except OSError:
        return False


def wait_gone(pid: int, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


def test_a_parsers_child_is_killed_with_it_on_timeout(tmp_path):
    pid_file = tmp_path / "child.pid"
    with ParserPool(timeout=2.0, memory_mb=None) as pool, pytest.raises(FileTimeoutError):
        pool.call("book.epub", start_child_and_wait, str(pid_file))
    child = int(pid_file.read_text())
    assert wait_gone(child), f"the parser's child {child} outlived the timeout"


def test_a_parsers_child_counts_against_the_memory_bound(tmp_path):
    with ParserPool(timeout=60.0) as pool:
        worker = pool.call("probe", own_resident_bytes)
    bound_mb = worker // 2**20 + 150  # the worker alone stays under it
    hog = "b = bytearray(b'x') * (400 * 2**20); import time; time.sleep(600)"
    pid_file = tmp_path / "child.pid"
    child = [sys.executable, "-c", hog]
    refused = pytest.raises(FileMemoryError, match=f"--file-memory-mb {bound_mb}")
    with ParserPool(timeout=60.0, memory_mb=bound_mb) as pool, refused:
        pool.call("book.epub", start_child_and_wait, str(pid_file), *child)
    assert wait_gone(int(pid_file.read_text()))


def test_tree_resident_bytes_adds_the_children(tmp_path):
    # an idle parent and its idle child (each asleep once the pid file is there): their sizes
    # hold still while they are read, unlike this process's, whose threads may allocate
    pid_file = tmp_path / "child.pid"
    parent = subprocess.Popen([sys.executable, "-c", PARENT_OF_ONE, str(pid_file)])
    child = 0
    try:
        deadline = time.monotonic() + 30
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        child = int(pid_file.read_text())
        own, kid = resident_bytes(parent.pid), resident_bytes(child)
        tree = tree_resident_bytes(parent.pid)
        assert own is not None and kid is not None and kid > 2**20
        assert tree == own + kid
    finally:
        parent.kill()
        parent.wait()
        if child:
            os.kill(child, 9)


PARENT_OF_ONE = """
import pathlib, subprocess, sys, time
ready = pathlib.Path(sys.argv[1] + ".ready")
sleeper = "import pathlib, sys, time; pathlib.Path(sys.argv[1]).touch(); time.sleep(60)"
child = subprocess.Popen([sys.executable, "-c", sleeper, str(ready)])
while not ready.exists():
    time.sleep(0.01)
pathlib.Path(sys.argv[1] + ".tmp").write_text(str(child.pid))
pathlib.Path(sys.argv[1] + ".tmp").rename(sys.argv[1])
time.sleep(60)
"""


def test_the_memory_bound_has_a_default():
    total_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20
    assert max(256, min(2048, total_mb // 2)) == DEFAULT_FILE_MEMORY_MB
    assert IngestOptions(Path("db"), "kb").file_memory_mb == DEFAULT_FILE_MEMORY_MB
    parser = build_parser()
    for extra, expected in (([], DEFAULT_FILE_MEMORY_MB), (["--file-memory-mb", "0"], None)):
        args = parser.parse_args(
            ["ingest", ".", "--persist-dir", "db", "--collection", "kb", *extra]
        )
        assert ingest_options(args).file_memory_mb == expected
