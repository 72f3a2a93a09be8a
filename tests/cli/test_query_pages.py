"""``query``'s text output names the pages of each hit (a PDF's ``page_start``/``page_end``),
so an operator can open the scan where the answer is."""

from __future__ import annotations

import re

import pytest

from ragingest.cli.main import main
from tests.scans import render_page, scan_pdf

pytestmark = pytest.mark.slow  # the real model, Chroma on disk

PAGES = {
    0: ["Книги из общего фонда выдают на четырнадцать дней."],
    1: ["Газеты читают только в зале, журналы выдают на дом."],
}


def test_query_shows_the_pages_of_each_hit(tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    blank = render_page(["x"], height_in=3)  # its size only: both pages are real text
    scan_pdf(docs / "rules.pdf", [blank, blank], PAGES)
    store = ["--persist-dir", str(tmp_path / "db"), "--collection", "kb"]
    assert main(["ingest", str(docs), *store, "--no-progress", "--chunk-size", "20"]) == 0
    capsys.readouterr()
    assert main(["query", "газеты в зале", *store, "-k", "2"]) == 0
    out = capsys.readouterr().out
    shown = re.findall(r"rules\.pdf  (pp?\. [\d-]+)  \[", out)
    assert shown and set(shown) <= {"p. 1", "p. 2", "pp. 1-2"}, out
