"""OCR with Tesseract: page images in, text lines with their boxes and confidences out.

Tesseract runs as a command (``tesseract ... hocr``: hOCR gives each line's text size) in a
subprocess of the calling process, so it stays in the parser worker's process group: the
file's time and memory bounds cover it and a killed worker takes it along. Each run gets
one thread (``OMP_THREAD_LIMIT=1``); pages run in parallel across the cores instead
(``OcrSettings.jobs``).

Contract: ``ocr_pages(path, images, settings)`` returns one ``OcrPage`` per image, in order:
its size in pixels, the rotation applied to make it upright (0/90/180/270, from Tesseract's
orientation detection, ``--psm 0``, run when the first reading looks wrong or runs down the
page) and its text lines in reading order, each with its box in the upright image and the
confidence of its words. A missing ``tesseract`` or language model raises ``ParseError`` naming
the file and the one install command. Results are cached by the image's bytes and the settings
(``ocr_cache``). Each page read reports ``OCR page i/n: name`` (``loaders.process.progress``).
"""

from __future__ import annotations

import io
import itertools
import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import TYPE_CHECKING

from ragingest.defaults import OCR_LANG, OCR_MAX_PAGES, OCR_MODE, OCR_MODES
from ragingest.errors import ParseError
from ragingest.loaders.process.progress import OCR_PAGE, report
from ragingest.loaders.scans.ocr_types import OcrLine, OcrPage

if TYPE_CHECKING:
    from PIL import Image

DEFAULT_OCR_DPI = 300  # PDF pages are rendered at this resolution for OCR
INSTALL = "sudo apt-get install tesseract-ocr tesseract-ocr-rus tesseract-ocr-eng"
# a first reading below this mean confidence (or with almost no words) is checked for rotation
_CHECK_ROTATION_BELOW = 75.0
# a page read sideways is read again turned upright unless that reads this much worse
_SIDEWAYS_SHARE = 0.9
_BOLD_STROKE = 1.35  # a line with strokes this much wider than the page's median is bold
_TESSERACT_SECONDS = 600  # one page; the worker's file timeout is the real bound


@dataclass(frozen=True)
class OcrSettings:
    """How scans are read: ``mode`` never/auto (pages without usable text)/always, Tesseract's
    languages, the most pages one file may have OCR'd, the resolution PDF pages are rendered
    at, and how many pages run at once (0: one per core)."""
    mode: str = OCR_MODE
    lang: str = OCR_LANG
    max_pages: int = OCR_MAX_PAGES
    dpi: int = DEFAULT_OCR_DPI
    jobs: int = 0

    def __post_init__(self) -> None:
        if self.mode not in OCR_MODES:
            raise ValueError(f"unknown OCR mode {self.mode!r}: use one of {', '.join(OCR_MODES)}")
        if not re.fullmatch(r"[A-Za-z_]+(?:\+[A-Za-z_]+)*", self.lang):
            raise ValueError(f"bad OCR language list {self.lang!r}: e.g. 'rus+eng'")
        if self.max_pages < 1 or self.dpi < 50:
            raise ValueError("OCR max pages must be >= 1 and the resolution >= 50 dpi")

    def key(self) -> str:
        """What an OCR result depends on besides the image (the cache key's settings part)."""
        return f"{self.lang}|{self.dpi}"


def tesseract_path() -> str | None:
    """The ``tesseract`` command on PATH, or None."""
    return shutil.which("tesseract")


def require_tesseract(path: Path, settings: OcrSettings) -> str:
    """The ``tesseract`` command, with every language of ``settings`` installed; else a
    ``ParseError`` naming ``path`` and the install command."""
    command = tesseract_path()
    if command is None:
        raise ParseError(
            path,
            "it is a scan (no text layer) and reading it needs OCR, but Tesseract is not "
            f"installed: {INSTALL} (or ingest with --ocr never to skip scans)",
        )
    listed = subprocess.run(
        [command, "--list-langs"], capture_output=True, text=True, check=False
    ).stdout.split()
    missing = [lang for lang in settings.lang.split("+") if lang not in listed]
    if missing:
        packages = " ".join(f"tesseract-ocr-{lang}" for lang in missing)
        raise ParseError(
            path,
            f"OCR language model(s) {', '.join(missing)} not installed: "
            f"sudo apt-get install {packages} (or choose others with --ocr-lang)",
        )
    return command


def check_page_count(path: Path, pages: int, settings: OcrSettings) -> None:
    """``ParseError`` naming ``path`` when ``pages`` to OCR are over ``--ocr-max-pages`` (asked
    before any page is rendered)."""
    if pages > settings.max_pages:
        raise ParseError(
            path,
            f"{pages} pages need OCR, over the limit of {settings.max_pages} "
            "(raise it with --ocr-max-pages)",
        )


def ocr_pages(path: Path, images: Sequence[bytes], settings: OcrSettings) -> list[OcrPage]:
    """Each image (PNG/JPEG/... bytes of one page) read by Tesseract, pages in parallel."""
    from ragingest.loaders.scans.ocr_cache import cached, store

    check_page_count(path, len(images), settings)
    key = settings.key()
    pages: list[OcrPage | None] = [cached(image, key) for image in images]
    missing = [i for i, page in enumerate(pages) if page is None]
    if missing:
        command = require_tesseract(path, settings)

        done = itertools.count(len(images) - len(missing) + 1)

        def one(index: int) -> None:
            page = pages[index] = _read_upright(path, command, images[index], settings)
            store(images[index], key, page)
            report(OCR_PAGE.format(done=next(done), total=len(images), name=path.name))

        jobs = min(settings.jobs or os.cpu_count() or 1, len(missing))
        if jobs == 1:
            for index in missing:
                one(index)
        else:
            with ThreadPoolExecutor(max_workers=jobs) as pool:
                list(pool.map(one, missing))
    return [page for page in pages if page is not None]


def _read_upright(path: Path, command: str, image: bytes, settings: OcrSettings) -> OcrPage:
    from PIL import Image

    with Image.open(io.BytesIO(image)) as opened:
        picture = opened.convert("L")
    page = _read(path, command, picture, settings, 0)
    confidences = page.confidences()
    mean = sum(confidences) / len(confidences) if confidences else 0.0
    sideways = _sideways(page)
    if mean >= _CHECK_ROTATION_BELOW and len(confidences) >= 3 and not sideways:
        return page
    rotation = _orientation(command, picture)
    if not rotation:
        return page
    turned = _read(path, command, picture.rotate(-rotation, expand=True), settings, rotation)
    turned_conf = turned.confidences()
    # more words read, and read surer; or as well as sideways (lines across the page are what
    # the heading and paragraph rules measure)
    if sum(turned_conf) > sum(confidences) * (_SIDEWAYS_SHARE if sideways else 1.0):
        return turned
    return page


def _sideways(page: OcrPage) -> bool:
    """Whether Tesseract read most lines of ``page`` running down it, not across (a page
    turned by 90°: it reads them, so their confidence alone does not tell)."""
    long = [line.box for line in page.lines if len(line.text) >= 4]
    tall = [box for box in long if box[3] - box[1] > box[2] - box[0]]
    return len(tall) * 2 > len(long)


def _orientation(command: str, picture: Image.Image) -> int:
    """Degrees (clockwise) that make ``picture`` upright, from Tesseract's OSD (0 if unsure)."""
    done = _run(command, _png(picture), ["--psm", "0"])
    found = re.search(r"Rotate:\s*(\d+)", done.stdout)
    confidence = re.search(r"Orientation confidence:\s*([\d.]+)", done.stdout)
    if done.returncode or not found or not confidence or float(confidence.group(1)) < 1.0:
        return 0
    return int(found.group(1)) % 360


def _read(
    path: Path, command: str, picture: Image.Image, settings: OcrSettings, rotation: int
) -> OcrPage:
    png = _png(picture)
    args = ["-l", settings.lang, "--psm", "3", "--dpi", str(settings.dpi), "hocr"]
    done = _run(command, png, args)
    if done.returncode:
        raise ParseError(path, f"Tesseract failed (exit {done.returncode}): {done.stderr[-300:]}")
    lines = parse_hocr(done.stdout)
    _mark_bold(picture, lines)
    return OcrPage(picture.width, picture.height, rotation, lines, png)


def _mark_bold(picture: Image.Image, lines: list[OcrLine]) -> None:
    """Mark the lines printed in a heavier weight than the page's body text: their strokes
    (dark pixels per dark run, row by row inside the words' boxes) are ``_BOLD_STROKE`` times
    the page's median line's or wider (hOCR gives no font weight)."""
    import numpy as np

    strokes: list[float] = []
    for line in lines:
        dark = runs = 0
        for left, top, right, bottom in line.words:
            if right > left and bottom > top:
                ink = np.asarray(picture.crop((left, top, right, bottom))) < 128
                dark += int(ink.sum())
                runs += int((ink[:, 1:] & ~ink[:, :-1]).sum() + ink[:, 0].sum())
        strokes.append(dark / runs if runs else 0.0)
    if len(strokes) < 3:
        return
    body = sorted(strokes)[len(strokes) // 2]
    for line, stroke in zip(lines, strokes, strict=True):
        line.bold = body > 0 and stroke >= body * _BOLD_STROKE


def _png(picture: Image.Image) -> bytes:
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG")
    return buffer.getvalue()


def _run(command: str, image: bytes, args: list[str]) -> subprocess.CompletedProcess[str]:
    environment = dict(os.environ, OMP_THREAD_LIMIT="1")
    done = subprocess.run(
        [command, "stdin", "stdout", *args],
        input=image,
        capture_output=True,
        env=environment,
        timeout=_TESSERACT_SECONDS,
        check=False,
    )
    return subprocess.CompletedProcess(
        done.args,
        done.returncode,
        done.stdout.decode("utf-8", "replace"),
        done.stderr.decode("utf-8", "replace"),
    )


class _Hocr(HTMLParser):
    """Tesseract's hOCR → ``OcrLine``s (paragraphs, lines with their estimated text size,
    words with their boxes and confidences)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[OcrLine] = []
        self.paragraph = 0
        self.word: list[str] | None = None
        self.word_title = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        kind, title = attributes.get("class") or "", attributes.get("title") or ""
        if kind == "ocr_par":
            self.paragraph += 1
        elif kind == "ocr_line" or kind in ("ocr_header", "ocr_caption", "ocr_textfloat"):
            size = re.search(r"x_size ([\d.]+)", title)
            self.lines.append(OcrLine("", _bbox(title), size=float(size.group(1)) if size else 0.0,
                                      paragraph=self.paragraph))
        elif kind == "ocrx_word" and self.lines:
            self.word, self.word_title = [], title

    def handle_data(self, data: str) -> None:
        if self.word is not None:
            self.word.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag != "span" or self.word is None:
            return
        text, title, self.word = "".join(self.word).strip(), self.word_title, None
        if not text:
            return
        line = self.lines[-1]
        confidence = re.search(r"x_wconf (\d+)", title)
        line.text = f"{line.text} {text}" if line.text else text
        line.words.append(_bbox(title))
        line.confidences.append(float(confidence.group(1)) if confidence else 0.0)


def _bbox(title: str) -> tuple[int, int, int, int]:
    found = re.search(r"bbox (\d+) (\d+) (\d+) (\d+)", title)
    if not found:
        return (0, 0, 0, 0)
    left, top, right, bottom = (int(v) for v in found.groups())
    return (left, top, right, bottom)


def parse_hocr(hocr: str) -> list[OcrLine]:
    """Tesseract's hOCR output → its text lines (words joined by spaces), in reading order."""
    parser = _Hocr()
    parser.feed(hocr)
    parser.close()
    return [line for line in parser.lines if line.text]
