"""Scans read by OCR (Tesseract, installed by scripts/setup_test_system.sh): page images the
tests render (tests/scans.py), a rotated page, a mixed PDF (a digital page and a scanned one),
a multi-page TIFF, a garbage text layer, and Tesseract missing. Exact values where OCR does
not enter (page map, boxes inside the page, offsets); error-rate bounds where it does."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ragingest.errors import ParseError
from ragingest.loaders.cleaning.rules import CleaningRules
from ragingest.loaders.scans.text_quality import real_word_share
from ragingest.schema import BOX_MAP_HINT, NOTES_HINT, PAGE_MAP_HINT
from ragingest.splitters.chunk_metadata import ocr_confidence, page_boxes
from tests.scans import cer, degrade, load_scan, render_page, scan_pdf, tesseract

pytestmark = pytest.mark.slow  # starts Tesseract processes

MEMO = [
    "# Выдача книг",
    "Книги из общего фонда выдают на четырнадцать дней. Альбомы с красной наклейкой тоже "
    "относятся к общему фонду. Для альбомов с красной наклейкой срок выдачи составляет три дня.",
    "# Продление",
    "Книгу можно продлить один раз, если на неё нет заявки другого читателя. Альбомы с "
    "красной наклейкой продлевать нельзя.",
]
DIGITAL = ["Правила читального зала. Газеты читают только в зале, журналы выдают на дом."]


def plain(blocks: list[str]) -> str:
    return " ".join(block.removeprefix("# ") for block in blocks)


@pytest.fixture(autouse=True)
def own_ocr_cache(ocr_cache: Path) -> Path:
    return ocr_cache




def check_boxes(document) -> None:
    """Every OCR'd line is where the box map says in the text; every box lies in its page;
    every line has words and their mean confidence."""
    text = document.page_content
    pages = document.metadata["pages"]
    for start, end, page, x0, y0, x1, y1, confidence, words in document.metadata[BOX_MAP_HINT]:
        assert 0 <= start < end <= len(text) and text[start:end].strip() == text[start:end]
        assert 1 <= page <= pages
        assert 0 <= x0 < x1 <= 1 and 0 <= y0 < y1 <= 1
        assert 0 <= confidence <= 100 and words >= 1


def test_a_scanned_image_reads_as_normalized_markdown(tmp_path):
    tesseract()
    path = tmp_path / "memo.png"
    render_page(MEMO).save(path)
    [document] = load_scan(path)
    text = document.page_content
    headings = [line for line in text.splitlines() if line.startswith("#")]
    assert [h.lstrip("# ") for h in headings] == ["Выдача книг", "Продление"]
    assert len(text.split("\n\n")) == 4  # two headings, two paragraphs joined across lines
    assert cer(text.replace("#", ""), plain(MEMO)) <= 0.02
    meta = document.metadata
    assert meta["ocr"] is True and 80 <= ocr_confidence(meta[BOX_MAP_HINT], 0, len(text)) <= 100
    assert meta[PAGE_MAP_HINT] == [(0, 1)] and meta["pages"] == 1
    check_boxes(document)
    # a chunk over the second paragraph points at a region of page 1 below the first heading
    start = text.index("Книгу")
    boxes = json.loads(page_boxes(meta[BOX_MAP_HINT], start, len(text)))
    assert len(boxes) == 1 and boxes[0][0] == 1
    first = json.loads(page_boxes(meta[BOX_MAP_HINT], 0, 5))
    assert first[0][4] <= boxes[0][2]  # the first heading ends above the second paragraph


@pytest.mark.parametrize(("rotate", "skew"), [(90, 0.0), (180, 0.0), (270, 0.0), (0, 1.5)])
def test_a_rotated_or_skewed_page_reads_upright(tmp_path, rotate, skew):
    tesseract()
    path = tmp_path / "turned.png"
    degrade(render_page(MEMO[:2]), rotate=rotate, skew=skew).save(path)
    [document] = load_scan(path)
    assert cer(document.page_content.replace("#", ""), plain(MEMO[:2])) <= 0.03
    check_boxes(document)


def test_the_scanned_page_of_a_mixed_pdf_is_read_not_dropped(tmp_path):
    tesseract()
    digital = render_page(["x"], height_in=3)  # its size only: page 1 is real text
    path = scan_pdf(tmp_path / "mixed.pdf", [digital, render_page(MEMO)], {0: DIGITAL})
    [document] = load_scan(path)
    text = document.page_content
    assert text.startswith(DIGITAL[0])
    second = text.index("Выдача книг")
    heading = text.rindex("\n", 0, second) + 1
    assert document.metadata[PAGE_MAP_HINT] == [(0, 1), (heading, 2)]  # at its "#"
    assert cer(text[second:].replace("#", ""), plain(MEMO)) <= 0.02
    assert document.metadata["_cleaning"]["empty_pages"] == 0
    check_boxes(document)
    assert {page for _s, _e, page, *_box in document.metadata[BOX_MAP_HINT]} == {2}
    # the digital page's text has no box; the scanned page's has
    assert page_boxes(document.metadata[BOX_MAP_HINT], 0, len(DIGITAL[0])) == ""
    assert json.loads(page_boxes(document.metadata[BOX_MAP_HINT], second, len(text)))[0][0] == 2


def test_running_headers_and_page_numbers_of_a_scan_are_cleaned(tmp_path):
    tesseract()
    header = "ООО «Ромашка» · Правила библиотеки"
    pages = [
        render_page([header, MEMO[0], MEMO[1]], footer="Стр. 1"),
        render_page([header, MEMO[2], MEMO[3]], footer="Стр. 2"),
        render_page([header, "# Читальный зал", "Газеты читают только в зале."], footer="Стр. 3"),
    ]
    path = tmp_path / "three.tiff"
    pages[0].save(path, save_all=True, append_images=pages[1:])
    [document] = load_scan(path)
    text = document.page_content
    assert "Ромашка" not in text and "Стр." not in text
    counts = document.metadata["_cleaning"]
    assert counts["header_footer_lines"] >= 3 and counts["page_numbers"] + counts[
        "header_footer_lines"
    ] == 6
    want = plain([*MEMO, "Читальный зал", "Газеты читают только в зале."])
    assert cer(text.replace("#", ""), want) <= 0.02
    assert [page for _offset, page in document.metadata[PAGE_MAP_HINT]] == [1, 2, 3]
    check_boxes(document)


def test_with_ocr_never_a_scan_fails_as_before_and_the_digital_page_stays(tmp_path):
    digital = render_page(["x"], height_in=3)
    mixed = scan_pdf(tmp_path / "mixed.pdf", [digital, render_page(MEMO[:2])], {0: DIGITAL})
    [document] = load_scan(mixed, mode="never")
    assert document.page_content == DIGITAL[0] + "\n" and "ocr" not in document.metadata
    scan = scan_pdf(tmp_path / "scan.pdf", [render_page(MEMO[:2])])
    with pytest.raises(ParseError, match="no extractable text on its 1 page"):
        load_scan(scan, mode="never")


def test_a_multi_page_tiff_reads_page_by_page(tmp_path):
    tesseract()
    first, second = render_page(MEMO[:2]), render_page(MEMO[2:])
    path = tmp_path / "pages.tiff"
    first.save(path, save_all=True, append_images=[second], compression="tiff_lzw")
    [document] = load_scan(path)
    text = document.page_content
    assert document.metadata["pages"] == 2
    assert document.metadata[PAGE_MAP_HINT] == [(0, 1), (text.index("# Продление"), 2)]
    assert cer(text.replace("#", ""), plain(MEMO)) <= 0.02
    check_boxes(document)


def test_a_garbage_text_layer_is_read_by_ocr_instead(tmp_path):
    tesseract()
    garbage = ["ÐšÐ½Ð¸Ð³Ð¸ Ð¸Ð· Ð¾Ð±Ñ‰ÐµÐ³Ð¾ Ñ„Ð¾Ð½Ð´Ð° Ð²Ñ‹Ð´Ð°ÑŽÑ‚ Ð½Ð° Ñ‡ÐµÑ‚Ñ‹Ñ€Ð½Ð°Ð´Ñ†Ð°Ñ‚ÑŒ"]
    assert real_word_share(garbage[0]) < 0.5 <= real_word_share(plain(MEMO))
    # the page shows the memo (its image) and carries a garbage text layer over it
    path = scan_pdf(tmp_path / "garbled.pdf", [render_page(MEMO)], {0: garbage})
    _add_image_under_text(path, render_page(MEMO))
    [document] = load_scan(path)
    assert "Ð" not in document.page_content
    assert cer(document.page_content.replace("#", ""), plain(MEMO)) <= 0.02
    assert any("garbage" in note for note in document.metadata[NOTES_HINT])


def _add_image_under_text(path: Path, image) -> None:
    """Put ``image`` on the first page of the PDF at ``path`` too (the text layer stays)."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    page = pdf[0]
    picture = pdfium.PdfImage.new(pdf)
    picture.set_bitmap(pdfium.PdfBitmap.from_pil(image.convert("RGB")))
    width, height = page.get_size()
    picture.set_matrix(pdfium.PdfMatrix().scale(width, height))
    page.insert_obj(picture)
    page.gen_content()
    pdf.save(str(path) + ".new")
    page.close()
    pdf.close()
    os.replace(str(path) + ".new", path)


def test_without_tesseract_a_scan_fails_by_name_and_other_files_go_in(tmp_path, monkeypatch):
    image = tmp_path / "scan.png"
    render_page(MEMO[:2]).save(image)
    digital = scan_pdf(tmp_path / "digital.pdf", [render_page(["x"], height_in=3)], {0: DIGITAL})
    note = tmp_path / "note.md"
    note.write_text("# Заметка\n\nТекст.\n", encoding="utf-8")
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    with pytest.raises(ParseError) as error:
        load_scan(image)
    assert error.value.path == str(image)
    assert "sudo apt-get install tesseract-ocr tesseract-ocr-rus tesseract-ocr-eng" in str(
        error.value
    )
    assert load_scan(digital)[0].page_content == DIGITAL[0] + "\n"
    assert load_scan(note)[0].page_content.startswith("# Заметка")


def test_ocr_is_cached_by_the_page_and_the_settings(tmp_path, monkeypatch, ocr_cache):
    tesseract()
    image = tmp_path / "scan.png"
    render_page(MEMO[:2]).save(image)
    [first] = load_scan(image)
    assert any(ocr_cache.rglob("*.json"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))  # no Tesseract: only the cache
    [again] = load_scan(image)
    assert again.page_content == first.page_content
    with pytest.raises(ParseError, match="Tesseract is not installed"):
        load_scan(image, lang="eng")  # other settings: not in the cache


def test_too_many_pages_to_ocr_fail_by_name(tmp_path):
    tesseract()
    path = scan_pdf(tmp_path / "long.pdf", [render_page(["x"], height_in=2)] * 3)
    with pytest.raises(ParseError, match="3 pages need OCR, over the limit of 2"):
        load_scan(path, max_pages=2)


def test_boilerplate_removed_by_the_run_moves_the_box_map(tmp_path):
    from ragingest.loaders.cleaning.corpus import CorpusCleaner, apply_corpus

    tesseract()
    path = tmp_path / "memo.png"
    disclaimer = "Документ носит справочный характер и не является публичной офертой."
    render_page([disclaimer, *MEMO]).save(path)
    [document] = load_scan(path)
    first = document.page_content.split("\n\n")[0]
    assert "справочный" in first
    corpus = CorpusCleaner(CleaningRules())
    for n in range(3):  # the disclaimer in three distinct files of the run: boilerplate
        corpus.observe(f"f{n}", [(f"{first}\n\nтекст файла номер {n}", ())])
    removed: list = []
    cleaned = apply_corpus(document, corpus, {"boilerplate_paragraphs": 0}, removed)
    assert [r.text for r in removed] == [first]
    text = cleaned.page_content
    assert "справочный" not in text
    lines = cleaned.metadata[BOX_MAP_HINT]
    assert len(lines) >= 5 and all(text[s:e].strip() == text[s:e] for s, e, *_ in lines)
    assert text[lines[0][0] : lines[0][1]] == "Выдача книг"


def test_a_bold_line_of_body_size_is_a_heading(tmp_path):
    tesseract()
    path = tmp_path / "bold.png"
    render_page(["** Порядок выдачи", MEMO[1], MEMO[3]]).save(path)
    [document] = load_scan(path)
    first = document.page_content.split("\n\n")[0]
    assert first.startswith("#") and first.lstrip("# ") == "Порядок выдачи"
    assert document.page_content.count("\n#") == 0  # the body lines are no headings
