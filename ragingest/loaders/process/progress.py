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
import math
import re
import threading
from collections.abc import Callable, Iterator, Sequence

log = logging.getLogger(__name__)

Reporter = Callable[[str], None]
OCR_PAGE = "OCR page {done}/{total}: {name}"  # what ``loaders.scans.ocr`` reports per page read
_OCR_PAGE = re.compile(r"^OCR page (\d+)/(\d+): ")

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


def ocr_page(text: str) -> tuple[int, int] | None:
    """``(pages read, pages in all)`` of an ``OCR_PAGE`` report, else None."""
    found = _OCR_PAGE.match(text)
    return (int(found[1]), int(found[2])) if found else None


def timeout_reason(timeout: float, progress: Sequence[str]) -> str:
    """The error reason for a parse stopped at ``--file-timeout``. A file stopped during OCR
    (``progress``: its first and latest reports, ``progress.OCR_PAGE``) says so, how many of
    its pages were read, and a limit that would do: the pages left at the pace so far (the
    pages read in this parse; cached ones cost nothing), a fifth more, in whole minutes."""
    first = ocr_page(progress[0]) if progress else None
    latest = ocr_page(progress[-1]) if progress else None
    if first is None or latest is None:
        return f"parsing took longer than {timeout:g} s (--file-timeout): stopped"
    done, total = latest
    pace = timeout / (done - first[0] + 1)  # the pages read in this parse
    enough = math.ceil((timeout + (total - done) * pace) * 1.2 / 60) * 60
    return (
        f"OCR took longer than {timeout:g} s (--file-timeout): stopped after {done} of {total} "
        f"pages; at this pace --file-timeout {enough} would do (or --ocr-max-pages to refuse "
        "long scans)"
    )
