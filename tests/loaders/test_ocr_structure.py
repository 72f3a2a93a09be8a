"""What OCR read is trusted only as far as OCR is sure, and its boxes are in one frame: a logo
above a memo (its OCR'd debris stays body text, never the title or a heading, and its chunk
carries its own low confidence); a page scanned at 90° and at 180°, and a PDF page a viewer
shows turned by 90° (``/Rotate``; Tesseract reads it sideways): boxes on the page as displayed,
the turn OCR made stored per page. Small page images the tests render (tests/scans.py);
Tesseract is installed by scripts/setup_test_system.sh."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragingest.cli.inspect import render_text
from ragingest.loaders import FoundFile
from ragingest.loaders.scans.scan import displayed_box
from ragingest.loaders.scans.text_quality import OCR_SURE, sure_ocr_heading
from ragingest.pipeline.plan import FileTask
from ragingest.pipeline.split import Splitting, split_documents
from ragingest.schema import BOX_MAP_HINT
from ragingest.splitters import HeadingFirstSplitter
from ragingest.splitters.factory import SplitSettings
from tests.loaders.test_ocr import MEMO
from tests.scans import degrade, render_page, tesseract


@pytest.fixture(autouse=True)
def ocr_cache(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("RAGINGEST_OCR_CACHE", str(tmp_path / "ocr-cache"))


def split(path: Path):
    """The file's one document (as split) and its chunks' metadata."""
    splitter = HeadingFirstSplitter(400, 0, 0, unit="chars")
    splitting = Splitting(SplitSettings(), lambda: splitter)
    task = FileTask(FoundFile(path, path.parent).source, path, path.parent)
    [(document, records)] = split_documents(task, splitting)[0]
    return document, [record.metadata for record in records]


def logo_above(page):
    """``page`` under a logo: filled shapes and a ring, larger than any text (what a letterhead
    holds), which OCR reads as a short line of debris."""
    from PIL import Image, ImageDraw

    out = Image.new("L", (page.width, page.height + 250), 255)
    out.paste(page, (0, 250))
    draw = ImageDraw.Draw(out)
    draw.ellipse((150, 120, 240, 210), fill=0)
    draw.rectangle((260, 120, 290, 210), fill=0)
    draw.polygon([(310, 210), (355, 120), (400, 210)], fill=0)
    draw.ellipse((420, 140, 480, 200), outline=0, width=10)
    return out


@pytest.mark.slow
def test_ocr_debris_of_a_logo_is_no_title_nor_heading_and_its_chunk_says_it_is_unsure(tmp_path):
    tesseract()
    path = tmp_path / "letterhead.png"
    logo_above(render_page(MEMO[:2])).save(path)
    document, chunks = split(path)
    text = document.page_content
    debris, rest = text.split("\n\n", 1)
    assert debris.strip() and not debris.startswith("#")  # the logo was read: body text
    assert rest.startswith("# Выдача книг\n\n")
    assert [line for line in text.splitlines() if line.startswith("#")] == ["# Выдача книг"]
    assert document.metadata["title"] == "Выдача книг"
    assert {chunk["title"] for chunk in chunks} == {"Выдача книг"}
    # confidence per chunk: the logo's chunk is unsure, the memo's sure
    [unsure] = [chunk for chunk in chunks if chunk["start_index"] == 0]
    sure = [chunk for chunk in chunks if chunk["start_index"] >= len(debris)]
    assert unsure["end_index"] <= len(debris) + 2
    assert unsure["ocr_confidence"] < OCR_SURE
    assert sure and all(chunk["ocr_confidence"] >= 90 for chunk in sure)


def _ink_box(image) -> tuple[float, float, float, float]:
    from PIL import ImageOps

    left, top, right, bottom = ImageOps.invert(image).getbbox()
    w, h = image.size
    return (left / w, top / h, right / w, bottom / h)


def _turned_pdf(path: Path, page, degrees: int) -> Path:
    """A scanned PDF of ``page`` whose page a viewer shows turned ``degrees`` clockwise
    (``/Rotate``)."""
    from pypdf import PdfReader, PdfWriter

    from tests.scans import scan_pdf

    writer = PdfWriter(clone_from=PdfReader(scan_pdf(path, [page])))
    writer.pages[0].rotate(degrees)
    writer.write(path)
    return path


@pytest.mark.slow
@pytest.mark.parametrize(
    ("scanned", "shown", "turn"),
    [(90, 0, 90), (180, 0, 180), (0, 90, 270)],
    ids=["image scanned at 90", "image scanned at 180", "PDF page with /Rotate 90"],
)
def test_boxes_of_a_turned_page_are_on_the_page_as_displayed_and_the_turn_is_stored(
    tmp_path, scanned, shown, turn
):
    """``scanned``: degrees the page image lies turned counter-clockwise; ``shown``: a PDF
    viewer turns it this far clockwise; ``turn``: how far OCR turns what is displayed."""
    from PIL import ImageDraw

    tesseract()
    upright = render_page(MEMO[:2])
    if shown:
        path = _turned_pdf(tmp_path / "turned.pdf", upright, shown)
    else:
        path = tmp_path / "turned.png"
        degrade(upright, rotate=scanned).save(path)
    # where the heading is on the page as displayed: the page with only its heading, turned
    heading_only = upright.copy()
    ImageDraw.Draw(heading_only).rectangle((0, 250, upright.width, upright.height), fill=255)
    want = _ink_box(degrade(heading_only, rotate=scanned - shown))
    document, chunks = split(path)
    text = document.page_content
    start, end, page, *box = document.metadata[BOX_MAP_HINT][0]
    assert (text[start:end], page) == ("Выдача книг", 1)
    assert box[:4] == pytest.approx(want, abs=0.01)
    assert {chunk["page_rotations"] for chunk in chunks} == {json.dumps([[1, turn]])}
    assert all(json.loads(chunk["page_boxes"])[0][0] == 1 for chunk in chunks)


@pytest.mark.parametrize("rotation", [0, 90, 180, 270])
def test_a_box_read_upright_goes_back_onto_the_page_as_displayed(rotation):
    from PIL import Image, ImageDraw

    displayed = Image.new("L", (400, 300), 255)
    ImageDraw.Draw(displayed).rectangle((40, 200, 119, 249), fill=0)
    upright = displayed.rotate(-rotation, expand=True)  # as OCR turns a page: clockwise
    want = _ink_box(displayed)
    assert displayed_box(_ink_box(upright), rotation) == pytest.approx(want, abs=1e-4)


@pytest.mark.parametrize(
    ("text", "sure"),
    [
        ("<8", False),  # debris the issue saw as titles and headings
        ("Ио", False),
        ("паре 2", False),
        ("2+ $9 | Ч 92 i? %)", False),
        ("¥4 ALY", False),
        ("Выдача книг", True),
        ("1.2.3. Цели", True),
        ("Что такое ClickHouse?", True),
        ("«Правила» читального зала", True),
        ("Отчёт за 2024 год", True),
    ],
)
def test_the_heading_test_of_an_ocr_line(text, sure):
    assert sure_ocr_heading(text, [95.0] * len(text.split())) is sure
    assert not sure_ocr_heading(text, [60.0] * len(text.split()))  # Tesseract unsure


def test_one_misread_word_does_not_sink_a_real_heading():
    heading = "Подготовка узлов к созданию хранилищ"  # as a skewed page of the OCR bench read it
    assert sure_ocr_heading(heading, [96, 96, 96, 96, 14])
    assert not sure_ocr_heading(heading, [96, 96, 40, 30, 14])


def test_inspect_shows_a_chunks_ocr_confidence():
    row = {"index": 0, "start_index": 0, "end_index": 4, "tokens": 2, "embed_text": "Ио"}
    result = {"source": "scan.png", "length": 4, "documents": [{}], "contains": []}
    result["chunks"] = [{**row, "metadata": {"strategy": "heading", "ocr_confidence": 41.5}}]
    assert "│ - │ OCR 41.5\nИо" in render_text(result)
