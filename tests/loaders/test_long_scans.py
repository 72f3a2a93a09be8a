"""Long scans as an operator meets them: a file stopped during OCR says so, how far it got and
a ``--file-timeout`` that would do; ``--ocr-max-pages`` refuses before rendering a page; a
very large page image is a note, not PIL's raw warning; ``--ocr never`` says which pages
went unread; the run log keeps each failed file's reason. One small OCR run at most."""

from __future__ import annotations

import json
import time
import warnings
from pathlib import Path

import pytest

from ragingest.errors import FileTimeoutError, ParseError
from ragingest.loaders.process.bounded import ParserPool
from ragingest.loaders.process.progress import report, timeout_reason
from ragingest.pipeline.options import IngestOptions
from ragingest.pipeline.report import FileResult, RunReport
from ragingest.pipeline.runlog import log_run, read, run_log_path
from tests.scans import load_scan, render_page, scan_pdf, tesseract

MEMO = ["# Выдача книг", "Книги из общего фонда выдают на четырнадцать дней."]
DIGITAL = ["Правила читального зала. Газеты читают только в зале, журналы выдают на дом."]


@pytest.fixture(autouse=True)
def own_ocr_cache(ocr_cache: Path) -> Path:
    return ocr_cache




def two_pages_read_then_stuck(total: int) -> None:
    """What a long OCR looks like from the parent: two pages reported, then a slow page."""
    report(f"OCR page 1/{total}: long.pdf")
    report(f"OCR page 2/{total}: long.pdf")
    time.sleep(120)


@pytest.mark.slow  # a parser worker
def test_a_file_stopped_during_ocr_says_how_far_it_got_and_what_would_do():
    with ParserPool(timeout=3) as pool, pytest.raises(FileTimeoutError) as caught:
        pool.call("long.pdf", two_pages_read_then_stuck, 10)
    # 2 pages in 3 s: 8 left at 1.5 s each, 15 s, a fifth more, whole minutes
    assert caught.value.reason == (
        "OCR took longer than 3 s (--file-timeout): stopped after 2 of 10 pages; at this pace "
        "--file-timeout 60 would do (or --ocr-max-pages to refuse long scans)"
    )


def test_the_limit_that_would_do_counts_only_the_pages_this_parse_read():
    # the operator's 60-page scan: 15 pages in the default 120 s
    first, latest = "OCR page 1/60: scan.pdf", "OCR page 15/60: scan.pdf"
    assert "stopped after 15 of 60 pages; at this pace --file-timeout 600 would do" in (
        timeout_reason(120, [first, latest])
    )
    # pages 1-40 came from the OCR cache: 2 read in 120 s, 18 left at 60 s each
    cached = timeout_reason(120, ["OCR page 41/60: scan.pdf", "OCR page 42/60: scan.pdf"])
    assert "after 42 of 60 pages; at this pace --file-timeout 1440 would do" in cached
    assert timeout_reason(2, ["other"]) == "parsing took longer than 2 s (--file-timeout): stopped"


def test_ocr_max_pages_refuses_before_any_page_is_rendered(tmp_path, monkeypatch):
    def render(*args: object) -> list[bytes]:
        raise AssertionError("rendered before the page count was checked")

    monkeypatch.setattr("ragingest.loaders.formats.pdf.render_pdf_pages", render)
    path = scan_pdf(tmp_path / "long.pdf", [render_page(["x"], height_in=2)] * 3)
    with pytest.raises(ParseError, match="3 pages need OCR, over the limit of 2"):
        load_scan(path, max_pages=2)


def test_ocr_never_says_which_pages_went_unread(tmp_path):
    digital = render_page(["x"], height_in=3)
    pages = [digital, render_page(MEMO), render_page(MEMO)]
    mixed = scan_pdf(tmp_path / "mixed.pdf", pages, {0: DIGITAL})
    [document] = load_scan(mixed, mode="never")
    assert (
        "2 of 3 pages have no text (page 2, 3): scanned? --ocr never is set, so none was read "
        "by OCR (--ocr auto reads pages without text)"
    ) in document.metadata["_notes"]


@pytest.mark.slow  # one small page through Tesseract
def test_a_very_large_page_is_read_with_a_note_not_a_warning(tmp_path, monkeypatch):
    from PIL import Image

    tesseract()
    page = render_page(MEMO)
    page.save(tmp_path / "poster.png")
    pixels = page.width * page.height
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", pixels * 3 // 4)  # over it: PIL warns
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        [document] = load_scan(tmp_path / "poster.png")
    assert not [w for w in caught if issubclass(w.category, Image.DecompressionBombWarning)]
    large = f"page 1: a {page.width}x{page.height} image"
    assert any(note.startswith(large) for note in document.metadata["_notes"])
    assert "Книги" in document.page_content
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", pixels // 3)  # over twice it: refused
    with pytest.raises(ParseError, match="a page image is too large to read"):
        load_scan(tmp_path / "poster.png")


def test_the_run_log_keeps_the_reason_of_each_file_that_failed(tmp_path):
    from ragingest.pipeline.checks import FAILED_BEFORE

    reason = "OCR took longer than 120 s (--file-timeout): stopped after 15 of 60 pages"
    report = RunReport(
        files=[
            FileResult("scan.pdf", "failed", error=reason, kind="timeout"),
            FileResult("old.pdf", "failed", error=FAILED_BEFORE, kind="timeout"),
            FileResult("a.md", "ok", chunks=1),
        ]
    )
    options = IngestOptions(tmp_path, "kb")
    log_run(options, report, "2026-12-06T00:00:00+00:00")
    [line] = read(run_log_path(tmp_path), "kb")
    assert line["failures"] == [{"source": "scan.pdf", "kind": "timeout", "error": reason}]
    assert json.dumps(line["failures"])  # a JSON line an operator can grep
