"""The per-file time bound: a parser past the limit is really stopped (its worker process is
killed), the file is named with the reason, and the next file parses in a fresh worker."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from ragingest.errors import (
    EmptyDocumentError,
    FileTimeoutError,
    ParseError,
    UnreadableFileError,
)
from ragingest.loaders.process.bounded import ParserPool

pytestmark = pytest.mark.slow


def sleep_forever(pid_file: str) -> None:
    Path(pid_file).write_text(str(os.getpid()))
    time.sleep(3600)


def die() -> None:
    os._exit(9)


def refuse(path: str) -> None:
    raise UnreadableFileError(path, "cannot read the file: Permission denied")


def test_a_parser_past_the_limit_is_killed_and_the_next_file_goes_on(tmp_path):
    pid_file = tmp_path / "pid"
    with ParserPool(timeout=1.0) as pool:
        with pytest.raises(FileTimeoutError, match=r"longer than 1 s \(--file-timeout\)") as caught:
            pool.call("slow.html", sleep_forever, str(pid_file))
        assert caught.value.path == "slow.html" and caught.value.kind == "timeout"
        stuck = int(pid_file.read_text())
        with pytest.raises(ProcessLookupError):  # the stuck worker is gone, not left running
            os.kill(stuck, 0)
        page = tmp_path / "page.md"
        page.write_text("# Страница\n\nТекст после зависшего файла.\n", "utf-8")
        documents = pool.load(page, tmp_path, 2**20)
        assert [d.page_content for d in documents] == [
            "# Страница\n\nТекст после зависшего файла.\n"
        ]
        assert documents[0].metadata["source"] == "page.md"
        assert pool.restarts == 1


def test_worker_errors_come_back_as_file_errors(tmp_path):
    with ParserPool(timeout=30) as pool:
        with pytest.raises(UnreadableFileError, match="Permission denied") as caught:
            pool.call("a.md", refuse, "a.md")
        assert caught.value.path == "a.md"
        with pytest.raises(ParseError, match=r"the parser process died \(exit 9\)"):
            pool.call("b.pdf", die)
        (tmp_path / "empty.txt").write_bytes(b"")
        with pytest.raises(EmptyDocumentError, match="no text found"):  # the loader's own error
            pool.load(tmp_path / "empty.txt", tmp_path, 2**20)
        assert pool.restarts == 1


def test_without_a_timeout_the_parser_runs_here(tmp_path):
    pool = ParserPool(timeout=None)
    assert pool.call("x", os.getpid) == os.getpid()
