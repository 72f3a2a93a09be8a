"""``inspect --html``: the boundary figure, rendered in headless Chromium."""

from __future__ import annotations

import html
import json
import re

import pytest

from ragingest.cli.inspect_html import render_html
from ragingest.cli.main import main
from tests.browser import assert_rendered, screenshot
from tests.conftest import memo_path


@pytest.mark.slow
def test_memo_120_30_figure(tmp_path, capsys, golden):
    sentences = golden["sentences"]
    out = tmp_path / "memo.html"
    args = ["inspect", str(memo_path()), "--strategy", "fixed", "--unit", "chars"]
    args += ["--chunk-size", "120", "--chunk-overlap", "30", "--html", str(out)]
    for name in "CD":  # the memo: В whole in part 3, Г whole in part 4 (0-based: 2 and 3)
        args += ["--contains", sentences[name]["text"]]
    assert main(args) == 0
    capsys.readouterr()
    page = out.read_text(encoding="utf-8")
    # the five windows of 120 characters with 30 of overlap, on a 0…430 scale
    for i, (s, e) in enumerate([(0, 120), (90, 210), (180, 300), (270, 390), (360, 430)]):
        assert f"chunk {i}: [{s}, {e})" in page
    # overlaps hatched between neighbours
    assert "shared by chunks 1 and 2: [180, 210)" in page
    c, d = sentences["C"], sentences["D"]
    assert f"[{c['start']}, {c['end']})" in page and f"[{d['start']}, {d['end']})" in page
    rows = re.findall(r"<tr><td><b>(\w)</b></td>.*?</tr>", page)
    assert rows == ["A", "B"]
    assert "whole in chunk 2" in page and "whole in chunk 3" in page
    # the document text is all there, escaped, with chunk marks
    text = memo_path().read_text(encoding="utf-8")
    visible = re.sub(r"<span class=\"(b|tag)\">[^<]*</span>", "", page.split('id="document">')[1])
    assert html.unescape(re.sub(r"<[^>]+>", "", visible)).strip() == text.strip()
    png = screenshot(out, tmp_path / "memo.png")
    assert_rendered(png)


def test_cut_sentence_is_reported():
    text = "First part of the rule. The exception comes here. Tail."
    chunks = [
        {"start_index": 0, "end_index": 30, "tokens": 30},
        {"start_index": 30, "end_index": len(text), "tokens": len(text) - 30},
    ]
    result = {
        "source": "x.md",
        "chunks": chunks,
        "contains": [
            {"text": "The exception comes here.", "chunks": []},
            {"text": "missing", "chunks": []},
        ],
    }
    page = render_html(result, text)
    assert "cut across chunks 0, 1" in page
    assert "not in the document" in page


@pytest.mark.slow
def test_many_chunks_use_two_lanes(tmp_path):
    text = " ".join(f"word{i}" for i in range(400))
    chunks = []
    for i in range(0, len(text), 50):
        chunks.append({"start_index": i, "end_index": min(len(text), i + 50), "tokens": 5})
    page = render_html({"source": "x", "chunks": chunks, "contains": []}, text)
    assert page.count('<div class="lane">') == 2
    out = tmp_path / "many.html"
    out.write_text(page, encoding="utf-8")
    assert_rendered(screenshot(out, tmp_path / "many.png"))


@pytest.mark.slow
def test_a_scan_is_drawn_with_its_chunk_regions_and_sentences(tmp_path, capsys, monkeypatch):
    from tests.loaders.test_ocr import MEMO
    from tests.scans import render_page, tesseract

    tesseract()
    monkeypatch.setenv("RAGINGEST_OCR_CACHE", str(tmp_path / "ocr-cache"))
    scan = tmp_path / "memo.png"
    render_page(MEMO).save(scan)
    out = tmp_path / "scan.html"
    args = ["inspect", str(scan), "--chunk-size", "40", "--min-chunk-size", "1"]
    args += ["--html", str(out), "--contains", "продлевать нельзя", "--json"]
    assert main(args) == 0
    result = json.loads(capsys.readouterr().out)
    chunks = result["chunks"]
    assert len(chunks) >= 2
    page = out.read_text(encoding="utf-8")
    assert page.count('<div class="scan" id="page-') == 1
    assert "data:image/png;base64," in page
    for i, chunk in enumerate(chunks):  # every chunk outlined where its lines are
        boxes = json.loads(chunk["metadata"]["page_boxes"])
        assert [box[0] for box in boxes] == [1]
        x0, y0, x1, y1 = boxes[0][1:]
        assert 0 <= x0 < x1 <= 1 and 0 <= y0 < y1 <= 1
        assert f'id="region-{i}-1"' in page
    # the sentence's line lit, under the last chunk's region
    lit = re.findall(r'<div class="lit" title="A" style="left:[\d.]+%;top:([\d.]+)%', page)
    assert len(lit) == 1
    last = json.loads(chunks[-1]["metadata"]["page_boxes"])[0]
    assert last[2] * 100 - 0.01 <= float(lit[0]) <= last[4] * 100
    assert_rendered(screenshot(out, tmp_path / "scan.png"))
