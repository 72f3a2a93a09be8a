"""The per-file memory bound: a parser whose process grows past ``memory_mb`` is killed from
outside and the file named with the reason; what earlier files left in the worker does not
count against the next one (it is tried again in a fresh worker)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from ragingest.errors import FileMemoryError
from ragingest.loaders.process.bounded import ParserPool

pytestmark = pytest.mark.slow

KEPT: list[bytes] = []  # memory a function leaves behind in the worker


def grow(mb: int, pid_file: str, hold: float = 0.0) -> int:
    """Allocate ``mb`` MB, 1 MB at a time, every page touched (a parser eating memory), and
    keep it ``hold`` seconds."""
    Path(pid_file).write_text(str(os.getpid()))
    held = [b"x" * 2**20 for _ in range(mb)]
    time.sleep(hold)
    return len(held)


def keep(mb: int) -> int:
    KEPT.append(b"x" * (mb * 2**20))
    return len(KEPT)


def test_a_parser_past_the_memory_limit_is_killed_and_the_next_file_goes_on(tmp_path):
    pid_file = tmp_path / "pid"
    with ParserPool(timeout=60, memory_mb=200) as pool:
        with pytest.raises(FileMemoryError) as caught:
            pool.call("huge.html", grow, 1500, str(pid_file))
        assert caught.value.path == "huge.html" and caught.value.kind == "memory"
        assert caught.value.reason == (
            "parsing needs more than 200 MB of memory (--file-memory-mb 200): stopped"
        )
        time.sleep(0.2)
        with pytest.raises(ProcessLookupError):  # killed, not left running
            os.kill(int(pid_file.read_text()), 0)
        assert pool.restarts == 1
        page = tmp_path / "page.md"
        page.write_text("# Страница\n\nТекст после тяжёлого файла.\n", "utf-8")
        documents = pool.load(page, tmp_path, 2**20)
        assert [d.page_content for d in documents] == [
            "# Страница\n\nТекст после тяжёлого файла.\n"
        ]
        assert pool.call("small.md", grow, 20, str(pid_file)) == 20


def test_memory_left_by_earlier_files_does_not_fail_the_next(tmp_path):
    with ParserPool(timeout=60, memory_mb=200) as pool:
        assert pool.call("a.txt", keep, 120) == 1  # the worker now holds ~170 MB
        first = pool.call("b.txt", os.getpid)
        # 100 MB more is past 200 MB in this worker, not in a fresh one: the retry takes it.
        # Held for several of the pool's looks at the worker's memory (one every 50 ms): on a
        # fast CPU a parse that frees its memory sooner can end between two looks
        assert pool.call("c.txt", grow, 100, str(tmp_path / "pid"), 0.5) == 100
        assert pool.restarts == 1 and pool.call("d.txt", os.getpid) != first


def test_a_memory_bound_alone_still_parses_in_a_worker():
    pool = ParserPool(timeout=None, memory_mb=500)
    try:
        assert pool.call("x", os.getpid) != os.getpid()
    finally:
        pool.close()
