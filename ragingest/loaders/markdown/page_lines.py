"""A paged loader's page texts → heading and paragraph blocks (``pages`` joins them into one
document).

Contract: ``page_lines(document)`` is the non-empty lines of one page's text (normalized,
inline-cleaned), each a ``PageLine`` of its 1-based page (``page_of``: ``page_number``, else a
numeric ``page_label``, else ``page`` + 1, else 1) that knows whether a blank line preceded
it. ``paragraphs(lines, title)`` joins lines into paragraphs (a paragraph runs on across a page
break when its last line ends no sentence) and makes headings of lines that stand alone after
a sentence end: a numbered line («1.2. Термины» → level 2 + numbering depth), a short line
before a capitalized one (level 2), and the line of the first page equal to ``title`` (the H1).
Deterministic: the same lines give the same blocks.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass

from langchain_core.documents import Document

from ragingest.loaders.base import normalize_text
from ragingest.loaders.markdown.blocks import (
    HEADING,
    PARAGRAPH,
    SENTENCE_END,
    Block,
    append_line,
    clean_inline,
)

_NUMBERED_HEADING = re.compile(r"^(\d{1,3}(?:\.\d{1,3}){0,3})\.?\s+[A-ZА-ЯЁ«\"]")


@dataclass
class PageLine(Block):
    """One line of a page's text; ``blank_before``: a blank line preceded it."""

    blank_before: bool = False


def page_of(document: Document) -> int:
    """1-based page: ``page_number`` (unstructured), else ``page_label`` when numeric, else
    ``page`` + 1 (pypdf and PyMuPDF count from 0)."""
    metadata = document.metadata
    if isinstance(metadata.get("page_number"), int):
        return metadata["page_number"]
    label = str(metadata.get("page_label", ""))
    if label.isdigit():
        return int(label)
    page = metadata.get("page")
    return page + 1 if isinstance(page, int) else 1


def page_lines(document: Document) -> list[PageLine]:
    page = page_of(document)
    lines: list[PageLine] = []
    blank = False
    for raw in normalize_text(document.page_content).split("\n"):
        text = clean_inline(raw)
        if not text:
            blank = bool(lines)
            continue
        lines.append(PageLine(PARAGRAPH, text, page=page, blank_before=blank))
        blank = False
    return lines


def paragraphs(lines: list[PageLine], title: str) -> list[Block]:
    """Page lines → heading and paragraph blocks (module docstring)."""
    widths = [len(line.text) for line in lines if len(line.text) > 20]
    width = statistics.median(widths) if widths else 80.0
    want_title = clean_inline(title).lower()
    first_page = lines[0].page if lines else None
    blocks: list[Block] = []
    current: Block | None = None
    ended = sentence = True  # the previous line ended a paragraph; a sentence
    for i, line in enumerate(lines):
        starts = ended or line.blank_before
        following = lines[i + 1] if i + 1 < len(lines) else None
        level = _heading_level(line, sentence or line.blank_before, following, width)
        if want_title and line.page == first_page and line.text.lower() == want_title:
            level, want_title = 1, ""
        if level:
            blocks.append(Block(HEADING, line.text, level=level, page=line.page))
            current, ended, sentence = None, True, True
            continue
        if current is not None and not starts:
            append_line(current, line.text, line.page)
        else:
            current = Block(PARAGRAPH, line.text, page=line.page)
            blocks.append(current)
        sentence = bool(SENTENCE_END.search(line.text))
        ended = sentence and len(line.text) < 0.85 * width
    return blocks


def _heading_level(line: PageLine, starts: bool, following: PageLine | None, width: float) -> int:
    """For a line after a sentence end (``starts``): 2 + numbering depth for a numbered line
    with no sentence end («1.2. Термины» → 3); 2 for such a short line before a capitalized
    line; else 0."""
    text = line.text
    if not starts or len(text) > 100 or SENTENCE_END.search(text):
        return 0
    if not (text[:1].isupper() or text[:1].isdigit()):
        return 0
    numbered = _NUMBERED_HEADING.match(text)
    if numbered:
        return min(6, 2 + numbered.group(1).count("."))
    if len(text) < 0.6 * width and following is not None and following.text[:1].isupper():
        return 2
    return 0
