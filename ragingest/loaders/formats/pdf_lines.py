"""What ``pypdf`` gives the PDF loader: each page's text lines with their font size,
boldness and height on the page, and the outline (bookmarks) flattened in order."""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragingest.loaders.markdown.blocks import PARAGRAPH, Block, clean_inline

if TYPE_CHECKING:
    from pypdf import PageObject


@dataclass
class Line(Block):
    """One text line of a PDF page with what heading detection reads: font size, boldness,
    vertical position."""
    size: float = 0.0
    bold: bool = False
    y: float = 0.0


@dataclass
class OutlineEntry:
    """One entry of a PDF's outline (bookmarks): depth, title, page."""
    depth: int
    title: str
    page: int


def _multiply(a: list[float], b: list[float]) -> list[float]:
    return [
        a[0] * b[0] + a[1] * b[2],
        a[0] * b[1] + a[1] * b[3],
        a[2] * b[0] + a[3] * b[2],
        a[2] * b[1] + a[3] * b[3],
        a[4] * b[0] + a[5] * b[2] + b[4],
        a[4] * b[1] + a[5] * b[3] + b[5],
    ]


def page_lines(page: PageObject, number: int) -> list[Line]:
    """The text lines of one page with their font size, boldness and height on the page."""
    lines: list[Line] = []
    current: list[tuple[str, float, bool, float]] = []

    def flush() -> None:
        text = clean_inline("".join(part for part, *_ in current))
        if text:
            weights: Counter[tuple[float, bool]] = Counter()
            for part, size, bold, _y in current:
                weights[(size, bold)] += len(part.strip())
            (size, bold), _ = weights.most_common(1)[0]
            y = next((y for part, _s, _b, y in current if part.strip()), 0.0)
            lines.append(Line(PARAGRAPH, text, page=number, size=size, bold=bold, y=y))
        current.clear()

    def visitor(text: str, cm: list, tm: list, font: Any, font_size: float) -> None:
        if not text:
            return
        matrix = _multiply([float(v) for v in tm], [float(v) for v in cm])
        size = round(float(font_size or 0) * math.hypot(matrix[2], matrix[3]), 1)
        name = str((font or {}).get("/BaseFont", "")) if hasattr(font, "get") else ""
        bold = bool(re.search(r"bold|black|heavy|semibold", name, re.IGNORECASE))
        pieces = text.split("\n")
        for i, piece in enumerate(pieces):
            if i:
                flush()
            if piece:
                current.append((piece, size, bold, matrix[5]))

    page.extract_text(visitor_text=visitor)
    flush()
    return lines


def read_outline(reader: Any) -> list[OutlineEntry]:
    """The outline of a ``pypdf`` reader, flattened in order (entries without a page left out)."""
    entries: list[OutlineEntry] = []

    def walk(items: list, depth: int) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item, depth + 1)
                continue
            try:
                page = reader.get_destination_page_number(item) + 1
            except Exception:
                continue
            title = clean_inline(str(getattr(item, "title", "") or ""))
            if title and page > 0:
                entries.append(OutlineEntry(depth, title, page))

    try:
        walk(reader.outline, 0)
    except Exception:
        return []
    return entries
