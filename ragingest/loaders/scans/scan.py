"""Scanned pages → the PDF loader's text lines, and where each line sits on its page.

What OCR read (``loaders.scans.ocr``) becomes ``ScanLine``s, the PDF loader's ``Line`` plus the
line's box on its page and its words' confidences, so a scan goes through the same heading
detection (line heights; a line OCR is not sure of is no heading: ``sure_heading``),
paragraph joining (hyphenation, line pitch) and cleaning (running headers, page numbers) as a
digital PDF. ``box_map`` then finds each line in the rendered Markdown: ``[(start, end, page,
x0, y0, x1, y1, confidence, words), ...]``, the split stage's ``schema.BOX_MAP_HINT`` (a
chunk's ``page_boxes`` and ``ocr_confidence``).

The frame of every box: the page as displayed (a PDF page as a viewer shows it, its
``/Rotate`` applied, which is how pypdfium2 renders it; an image file as stored), normalized
0-1 from its top left. OCR reads a page turned upright (``OcrPage.rotation``); its boxes are
turned back into that frame here, and the turn is kept per page (``schema.SCAN_PAGES_HINT``,
a chunk's ``page_rotations``).

Which pages need OCR: a page without a text layer, or whose text layer is garbage (a broken
ToUnicode map gives letters that form no words: ``text_quality.real_word_share``).
"""

from __future__ import annotations

import io
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ragingest.loaders.formats.pdf_lines import Line
from ragingest.loaders.markdown.blocks import PARAGRAPH, clean_inline
from ragingest.loaders.scans.ocr_types import OcrPage
from ragingest.loaders.scans.text_quality import (
    GARBAGE_SHARE,
    ocr_text_is_clean,
    real_word_share,
    sure_ocr_heading,
)

if TYPE_CHECKING:
    from PIL import Image

_MIN_TOKENS = 5  # a page with fewer tokens says too little to be called garbage
_SAME_SIZE = 1.12  # a heading is at least this much larger than the body text (as in pdf)
_SIZE_STEP = 1.06  # OCR'd text sizes further apart than this are different fonts


def is_garbage(lines: Sequence[Line]) -> bool:
    """Whether a page's text layer reads as garbage (too few real words)."""
    text = " ".join(line.text for line in lines)
    return len(text.split()) >= _MIN_TOKENS and real_word_share(text) < GARBAGE_SHARE


def pages_to_ocr(by_page: Sequence[Sequence[Line]], mode: str) -> tuple[list[int], list[str]]:
    """The pages (from 1) of a PDF to read by OCR: every page with ``mode`` always, else (auto)
    those without text or whose text layer is garbage; and a note for each garbage one."""
    wanted: list[int] = []
    notes: list[str] = []
    for number, found in enumerate(by_page, 1):
        if mode == "always" or not found:
            wanted.append(number)
        elif is_garbage(found):
            wanted.append(number)
            notes.append(f"page {number}: its text layer is garbage, read by OCR")
    return wanted, notes


@dataclass
class ScanLine(Line):
    """A text line read by OCR: the ``Line`` plus its box on the page as displayed (normalized
    0-1: left, top, right, bottom) and the confidence of each of its words."""
    box: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    confidences: list[float] = field(default_factory=list)


def sure_heading(line: Line) -> bool:
    """Whether ``line`` may be a title or heading as far as OCR goes: a line of a text layer
    may; an OCR'd line if it passes ``text_quality.sure_ocr_heading``."""
    return not isinstance(line, ScanLine) or sure_ocr_heading(line.text, line.confidences)


def displayed_box(
    box: tuple[float, float, float, float], rotation: int
) -> tuple[float, float, float, float]:
    """``box`` (normalized, in the page turned ``rotation`` degrees clockwise to read upright)
    in the page as displayed, before that turn."""
    left, top, right, bottom = box
    turns = {
        90: (top, 1 - right, bottom, 1 - left),
        180: (1 - right, 1 - bottom, 1 - left, 1 - top),
        270: (1 - bottom, left, 1 - top, right),
    }
    x0, y0, x1, y1 = turns.get(rotation % 360, box)
    return (round(x0, 4), round(y0, 4), round(x1, 4), round(y1, 4))


def scan_lines(page: OcrPage, number: int, dpi: int) -> list[ScanLine]:
    """The lines of one OCR'd page as ``ScanLine``s: ``size`` is Tesseract's estimate of the
    text size in points (the median of the line's Tesseract paragraph), ``y`` the line's top
    in points from the upright page's bottom (as in a PDF), ``box`` on the page as
    displayed."""
    to_points = 72.0 / dpi
    by_paragraph: dict[int, list[float]] = {}
    for line in page.lines:
        by_paragraph.setdefault(line.paragraph, []).append(line.size)
    out: list[ScanLine] = []
    for line in page.lines:
        text = clean_inline(line.text)
        if not text:
            continue
        # a line without ascenders reads smaller: it takes its paragraph's size unless it is
        # clearly larger (a heading Tesseract put in the paragraph)
        median = statistics.median(by_paragraph[line.paragraph])
        size = line.size if line.size > median * _SAME_SIZE else median
        left, top, right, bottom = line.box
        upright = (left / page.width, top / page.height, right / page.width, bottom / page.height)
        box = displayed_box(upright, page.rotation)
        size = size or float(bottom - top)
        out.append(
            ScanLine(
                PARAGRAPH,
                text,
                page=number,
                size=size * to_points,
                bold=line.bold,
                y=(page.height - top) * to_points,
                box=box,
                confidences=list(line.confidences),
            )
        )
    return out


def unify_sizes(lines: Sequence[Line]) -> None:
    """Give the OCR'd lines of one font size one size: sorted by size, a new size starts where
    the next line is over ``_SIZE_STEP`` larger than the one before it (fonts come in steps,
    OCR's estimates vary a little around each); each group gets its median, to 0.1 pt."""
    scanned = sorted((line for line in lines if isinstance(line, ScanLine)), key=lambda x: x.size)
    groups: list[list[ScanLine]] = []
    for line in scanned:
        if groups and line.size <= groups[-1][-1].size * _SIZE_STEP:
            groups[-1].append(line)
        else:
            groups.append([line])
    for group in groups:
        size = round(statistics.median(member.size for member in group), 1)
        for member in group:
            member.size = size
    # a bold line near the body's size is of the body's size (a bold run-in heading): OCR's
    # estimate of a bold line's size is off by more than a digital PDF's
    weights: Counter[float] = Counter()
    for line in scanned:
        weights[line.size] += len(line.text)
    body = weights.most_common(1)[0][0] if weights else 0.0
    for line in scanned:
        if line.bold and max(line.size, body) <= min(line.size, body) * _SAME_SIZE:
            line.size = body


def join_heading_lines(lines: Sequence[Line]) -> list[Line]:
    """``lines`` with a heading that wraps onto more lines made one line: consecutive OCR'd
    lines of one page and about one size, larger than the body text, one line pitch apart, the
    first read clean (``text_quality.ocr_text_is_clean``)."""
    weights: Counter[float] = Counter()
    for line in lines:
        weights[line.size] += len(line.text)
    body = weights.most_common(1)[0][0] if weights else 0.0
    out: list[Line] = []
    for line in lines:
        previous = out[-1] if out else None
        if (
            isinstance(line, ScanLine)
            and isinstance(previous, ScanLine)
            and previous.page == line.page
            and min(previous.size, line.size) >= body * _SAME_SIZE
            and max(previous.size, line.size) <= min(previous.size, line.size) * _SAME_SIZE
            and 0 < previous.y - line.y <= line.size * 2.0
            and ocr_text_is_clean(previous.text, previous.confidences)  # no logo above a title
        ):
            previous.text = clean_inline(f"{previous.text} {line.text}")
            previous.box = (
                min(previous.box[0], line.box[0]),
                min(previous.box[1], line.box[1]),
                max(previous.box[2], line.box[2]),
                max(previous.box[3], line.box[3]),
            )
            previous.confidences += line.confidences
            previous.y = line.y  # the next line's gap is from this one
            continue
        out.append(line)
    return out


BoxEntry = tuple[int, int, int, float, float, float, float, float, int]


def box_map(text: str, lines: Sequence[Line]) -> list[BoxEntry]:
    """Where each OCR'd line of ``lines`` (in text order) is in the rendered ``text``:
    ``[(start, end, page, x0, y0, x1, y1, confidence, words), ...]`` (the mean confidence of
    its ``words`` words, 0-100); a line not found (cleaned away) is left out."""
    out: list[BoxEntry] = []
    cursor = 0
    for line in lines:
        if not isinstance(line, ScanLine) or not line.text:
            continue
        wanted = line.text[:-1] if line.text.endswith("-") else line.text
        start = text.find(wanted, cursor)
        if start < 0:
            continue
        end = start + len(wanted)
        words = len(line.confidences)
        confidence = round(sum(line.confidences) / words, 1) if words else 0.0
        out.append((start, end, line.page or 0, *line.box, confidence, words))
        cursor = end
    return out


def image_frames(data: bytes) -> list[bytes]:
    """Each page of an image file (a multi-page TIFF has several) as PNG bytes."""
    from PIL import Image, ImageSequence

    frames: list[bytes] = []
    with Image.open(io.BytesIO(data)) as image:
        for frame in ImageSequence.Iterator(image):
            buffer = io.BytesIO()
            _grey(frame).save(buffer, format="PNG")
            frames.append(buffer.getvalue())
    return frames


def _grey(frame: Image.Image) -> Image.Image:
    if frame.mode in ("RGBA", "LA", "P"):
        frame = frame.convert("RGBA")
        from PIL import Image

        background = Image.new("RGBA", frame.size, (255, 255, 255, 255))
        frame = Image.alpha_composite(background, frame)
    return frame.convert("L")


def page_pictures(data: bytes, pdf: bool, pages: Sequence[int], dpi: int = 100) -> dict[int,
                                                                                    bytes]:
    """``pages`` (from 1) of a PDF or an image file rendered at ``dpi`` as displayed (the frame
    of the box map), as PNG bytes (``inspect --html``)."""
    from PIL import Image

    numbers = sorted(pages)
    if pdf:
        images = render_pdf_pages(data, numbers, dpi)
    else:
        frames = image_frames(data)
        images = [frames[number - 1] for number in numbers if number <= len(frames)]
    out: dict[int, bytes] = {}
    for number, image in zip(numbers, images, strict=False):
        with Image.open(io.BytesIO(image)) as opened:
            picture = opened.convert("L")
        if not pdf:  # an image file: at most 1000 pixels wide on the page
            picture.thumbnail((1000, 1000 * picture.height // max(1, picture.width)))
        buffer = io.BytesIO()
        picture.save(buffer, format="PNG", optimize=True)
        out[number] = buffer.getvalue()
    return out


def render_pdf_pages(data: bytes, numbers: Sequence[int], dpi: int) -> list[bytes]:
    """Pages ``numbers`` (from 1) of a PDF rendered by pypdfium2 at ``dpi``, as PNG bytes."""
    import pypdfium2 as pdfium  # type: ignore[import-untyped]  # no py.typed

    document = pdfium.PdfDocument(data)
    try:
        images = []
        for number in numbers:
            page = document[number - 1]
            try:
                bitmap = page.render(scale=dpi / 72.0, grayscale=True)
                buffer = io.BytesIO()
                bitmap.to_pil().convert("L").save(buffer, format="PNG")
                images.append(buffer.getvalue())
            finally:
                page.close()
        return images
    finally:
        document.close()
