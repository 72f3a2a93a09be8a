"""Coordinates after cross-document cleaning: a boilerplate paragraph removed from page 1 of
OCR'd scans moves every box with the text, so each chunk's ``page_boxes`` lie on its pages.
(Before, the box map was rebuilt by searching each line's text again: the removed line's text
found later, on page 2, carried its page-1 box there and dropped the lines in between.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragingest.loaders.cleaning.rules import CleaningRules
from ragingest.pipeline.plan import make_plan, scan_corpus
from ragingest.splitters.heading_first import HeadingFirstSplitter
from tests.scans import render_page, scan_pdf, tesseract
from tests.splitting import split_file

pytestmark = pytest.mark.slow  # starts Tesseract processes

NOTICE = "Документ носит справочный характер и не является офертой."
TOPICS = ["Выдача книг", "Продление", "Читальный зал"]
FIRST = [
    "Книги из общего фонда выдают на четырнадцать дней по читательскому билету.",
    "Книгу можно продлить один раз, если на неё нет заявки другого читателя.",
    "Газеты и журналы читают только в зале, на дом их не выдают никогда.",
]
SECOND = [
    "Альбомы с красной наклейкой выдают на три дня и не продлевают.",
    "Продлить книгу можно на абонементе, по телефону или на сайте.",
    "В читальном зале работает гардероб и есть розетки у столов.",
]


@pytest.fixture(autouse=True)
def ocr_cache(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("RAGINGEST_OCR_CACHE", str(tmp_path / "ocr-cache"))


def scans(folder: Path) -> list[Path]:
    """Three distinct two-page scans: the notice opens page 1 of each (boilerplate) and is the
    first line of a longer paragraph on page 2 (not boilerplate: kept)."""
    folder.mkdir()
    out = []
    for n, topic in enumerate(TOPICS):
        one = render_page([NOTICE, f"# {topic}", FIRST[n]], height_in=3.0)
        two = render_page(
            [SECOND[n], f"{NOTICE} Соответствующее уведомление висит на стенде.", FIRST[n - 1]],
            height_in=3.0,
        )
        out.append(scan_pdf(folder / f"memo{n}.pdf", [one, two]))
    return out


def test_every_box_lies_on_a_page_of_its_chunk_after_boilerplate_removal(tmp_path):
    tesseract()
    root = tmp_path / "scans"
    paths = scans(root)
    corpus = scan_corpus(make_plan([root], {}).tasks, CleaningRules())
    splitter = HeadingFirstSplitter(120, 0, 0, unit="chars")
    for path in paths:
        chunks = split_file(path, root, splitter, corpus=corpus)
        assert chunks.cleaning["boilerplate_paragraphs"] == 1
        boxed = 0
        for chunk in chunks:
            meta = chunk.metadata
            pages = range(meta["page_start"], meta["page_end"] + 1)
            boxes = json.loads(meta.get("page_boxes") or "[]")
            assert all(page in pages for page, *_box in boxes), (chunk.text, boxes)
            boxed += bool(boxes)
        assert boxed == len(chunks)  # no chunk lost its boxes either
        [kept] = [c for c in chunks if "Соответствующее уведомление" in c.text]
        assert kept.metadata["page_start"] == 2  # page 2's paragraph is kept, on page 2
