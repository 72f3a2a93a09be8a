"""Scanned pages the tests (and ``bench/ocr.py``) make: text rendered to page images with
Pillow and the Roboto fonts of the ``font-roboto`` wheel (Cyrillic; headings larger and bold),
plus degraded copies (lower resolution, JPEG, skew, rotation, speckle)."""

from __future__ import annotations

import io
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

BODY_PT = 11  # body text size; headings are 16 pt bold


def tesseract() -> str:
    """The ``tesseract`` command (with rus and eng), or the test is skipped with the reason."""
    import subprocess

    path = shutil.which("tesseract")
    if path:
        langs = subprocess.run([path, "--list-langs"], capture_output=True, text=True).stdout
        if {"rus", "eng"} <= set(langs.split()):
            return path
    pytest.skip(
        "Tesseract with its rus and eng models is not installed and "
        "scripts/setup_test_system.sh could not install it (needs apt-get: apt-get install -y "
        "tesseract-ocr tesseract-ocr-rus tesseract-ocr-eng)"
    )
    raise AssertionError  # unreachable


def _font(size_pt: float, dpi: int, bold: bool = False) -> Any:
    import font_roboto
    from PIL import ImageFont

    name = "RobotoBold" if bold else "Roboto"
    return ImageFont.truetype(font_roboto.font_files[name], round(size_pt * dpi / 72))


def render_page(
    blocks: list[str],
    dpi: int = 300,
    width_in: float = 5.0,
    height_in: float | None = None,
    footer: str = "",
) -> Any:
    """A white page image (mode L) with ``blocks`` on it: a block starting with ``# `` is a
    16 pt bold heading, one starting with ``** `` a bold line of the body's size, any other a
    paragraph of 11 pt text wrapped to the page width; ``footer`` is drawn at the bottom. The
    height fits the text unless given."""
    from PIL import Image, ImageDraw

    body, heading = _font(BODY_PT, dpi), _font(16, dpi, bold=True)
    strong = _font(BODY_PT, dpi, bold=True)
    margin = int(0.5 * dpi)
    line_px = int(BODY_PT * 1.45 * dpi / 72)
    room = width_in * dpi - 2 * margin
    rows: list[tuple[str, Any, int]] = []  # text, font, advance
    for block in blocks:
        if block.startswith("# "):
            lines = _wrap(block[2:], heading, room)
            rows += [(line, heading, int(line_px * 1.5)) for line in lines]
            rows.append(("", body, line_px // 2))
        elif block.startswith("** "):  # a bold line of the body's size
            rows += [(line, strong, line_px) for line in _wrap(block[3:], strong, room)]
            rows.append(("", body, line_px // 2))
        else:
            rows += [(line, body, line_px) for line in _wrap(block, body, room)]
            rows.append(("", body, line_px // 2))
    needed = margin * 2 + sum(advance for *_, advance in rows) + (line_px * 2 if footer else 0)
    height = int(height_in * dpi) if height_in else needed
    if needed > height:
        raise ValueError(f"the text needs {needed} px, the page has {height}: cut it shorter")
    page = Image.new("L", (int(width_in * dpi), height), 255)
    draw = ImageDraw.Draw(page)
    y = margin
    for text, font, advance in rows:
        if text:
            draw.text((margin, y), text, font=font, fill=0)
        y += advance
    if footer:
        draw.text((page.width // 2, height - margin), footer, font=body, fill=0, anchor="ms")
    return page


def _wrap(text: str, font: Any, room: float) -> list[str]:
    """``text`` cut at spaces into lines that fit ``room`` pixels in ``font``."""
    lines: list[str] = []
    for word in text.split():
        if lines and font.getlength(f"{lines[-1]} {word}") <= room:
            lines[-1] += f" {word}"
        else:
            lines.append(word)
    return lines


def png(image: Any) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def degrade(image: Any, *, dpi_from: int = 300, dpi: int = 300, jpeg: int = 0,
            skew: float = 0.0, rotate: int = 0, speckle: float = 0.0, seed: int = 0) -> Any:
    """A worse copy of a page image: resampled to ``dpi``, turned by ``skew`` degrees, turned
    by ``rotate`` (90/180/270), salt-and-pepper ``speckle`` (share of pixels), JPEG quality."""
    from PIL import Image

    out = image
    if dpi != dpi_from:
        out = out.resize((out.width * dpi // dpi_from, out.height * dpi // dpi_from),
                         Image.Resampling.LANCZOS)
    if skew:
        out = out.rotate(skew, expand=True, fillcolor=255, resample=Image.Resampling.BICUBIC)
    if rotate:
        out = out.rotate(rotate, expand=True, fillcolor=255)
    if speckle:
        rng = random.Random(seed)
        pixels = out.load()
        for _ in range(int(out.width * out.height * speckle)):
            pixels[rng.randrange(out.width), rng.randrange(out.height)] = rng.choice((0, 255))
    if jpeg:
        buffer = io.BytesIO()
        out.save(buffer, format="JPEG", quality=jpeg)
        out = Image.open(io.BytesIO(buffer.getvalue())).convert("L")
    return out


def cer(got: str, want: str) -> float:
    """Character error rate: edit distance of the whitespace-normalized texts over the
    reference's length."""
    a, b = " ".join(got.split()), " ".join(want.split())
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1] / max(1, len(b))


def scan_pdf(path: Path, pages: list[Any], text_pages: dict[int, list[str]] | None = None,
             dpi: int = 300) -> Path:
    """A PDF (fpdf2) whose page ``i`` is the image ``pages[i]`` (a scan: no text layer), or,
    for ``i`` in ``text_pages``, those paragraphs as real text (11 pt Roboto)."""
    import font_roboto
    from fpdf import FPDF

    pdf = FPDF(unit="pt")
    pdf.add_font("Roboto", "", font_roboto.font_files["Roboto"])
    for index, image in enumerate(pages):
        size = (image.width * 72 / dpi, image.height * 72 / dpi)
        pdf.add_page(format=size)
        if text_pages and index in text_pages:
            pdf.set_font("Roboto", size=BODY_PT)
            pdf.set_xy(36, 36)
            for paragraph in text_pages[index]:
                pdf.multi_cell(size[0] - 72, 15, paragraph, new_x="LMARGIN", new_y="NEXT")
        else:
            pdf.image(io.BytesIO(png(image)), x=0, y=0, w=size[0], h=size[1])
    pdf.output(str(path))
    return path


def load_scan(path: Path, **ocr: Any) -> list[Any]:
    """The Documents ``path``'s loader gives with ``OcrSettings(**ocr)``."""
    from ragingest.loaders import loader_for
    from ragingest.loaders.cleaning.rules import CleaningRules
    from ragingest.loaders.scans.ocr import OcrSettings

    loader = loader_for(path, path.parent, cleaning=CleaningRules(ocr=OcrSettings(**ocr)))
    return list(loader.lazy_load())
