"""A long OCR says how far it is, in pages: each page read reports ``OCR page i/n: name``
from the parser worker process to the run (its log with ``--verbose``; its progress bar on a
terminal)."""

from __future__ import annotations

import io
import logging

import pytest
from tqdm import tqdm

from ragingest.cli.main import main
from ragingest.loaders.process.progress import report
from ragingest.pipeline.apply_plan import _parse_progress
from tests.loaders.test_ocr import MEMO
from tests.scans import render_page, scan_pdf, tesseract


@pytest.fixture(autouse=True)
def ocr_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGINGEST_OCR_CACHE", str(tmp_path / "ocr-cache"))


@pytest.mark.slow  # Tesseract, the model, Chroma
def test_an_ocr_run_reports_its_pages_from_the_parser_worker(tmp_path, caplog):
    tesseract()
    docs = tmp_path / "docs"
    docs.mkdir()
    pages = [render_page(MEMO[:2]), render_page(MEMO[2:])]
    scan_pdf(docs / "scan.pdf", pages)
    caplog.set_level(logging.INFO, logger="ragingest.loaders.process.progress")
    store = ["--persist-dir", str(tmp_path / "db"), "--collection", "c"]
    assert main(["--verbose", "ingest", str(docs), *store, "--no-progress"]) == 0
    # the parse ran in the worker process (the default file timeout bounds it): these lines
    # crossed the worker's connection to reach this process's log
    said = [
        r.getMessage() for r in caplog.records if r.name == "ragingest.loaders.process.progress"
    ]
    assert sorted(said) == ["OCR page 1/2: scan.pdf", "OCR page 2/2: scan.pdf"]


def test_on_a_progress_bar_the_pages_show_on_the_bar():
    shown = io.StringIO()
    bar = tqdm(["scan.pdf"], file=shown, disable=False, mininterval=0)
    with _parse_progress(bar):
        report("OCR page 3/40: scan.pdf")
    report("after the run")  # logged again, not on the closed bar
    bar.close()
    assert "OCR page 3/40: scan.pdf" in shown.getvalue()
    assert "after the run" not in shown.getvalue()


def test_without_a_terminal_the_pages_are_logged(caplog):
    bar = tqdm(["scan.pdf"], file=io.StringIO(), disable=True)
    caplog.set_level(logging.INFO, logger="ragingest.loaders.process.progress")
    with _parse_progress(bar):
        report("OCR page 1/2: scan.pdf")
    assert [r.getMessage() for r in caplog.records] == ["OCR page 1/2: scan.pdf"]
