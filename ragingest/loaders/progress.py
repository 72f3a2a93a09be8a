"""Progress inside one file's parse: long work (OCR, page by page) says how far it is.

A parser calls ``report("OCR page 3/40: scan.pdf")``; what happens with it depends on where
the parse runs. By default the line is logged (INFO: shown with ``--verbose``); a run with a
progress bar shows it on the bar instead (``reporting``); in the parser worker process the
line goes back to the parent over the worker's connection, which reports it there. Reports
are best effort: one that can't be shown is dropped, the parse goes on.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator

log = logging.getLogger(__name__)

Reporter = Callable[[str], None]

_lock = threading.Lock()  # OCR reports from its page threads
_reporter: Reporter = log.info


def report(text: str) -> None:
    """Say how far the current file's parse is (thread-safe, never raises)."""
    with _lock, contextlib.suppress(Exception):
        _reporter(text)


@contextlib.contextmanager
def reporting(reporter: Reporter) -> Iterator[None]:
    """Within the block, reports go to ``reporter`` (then back to the one before)."""
    global _reporter
    with _lock:
        before, _reporter = _reporter, reporter
    try:
        yield
    finally:
        with _lock:
            _reporter = before
