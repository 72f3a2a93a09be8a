"""The one shape every rich-format loader goes through: a list of ``Block``s, rendered to
normalized Markdown with an offset → page map.

Contract: ``render(blocks)`` returns ``(text, page_map)``: headings as ``#`` lines, paragraphs
and list items as their own lines separated by blank lines (list items by single newlines),
tables as one Markdown table block (``|`` rows, a ``---`` rule after the header), code fenced.
``page_map`` is the sorted ``[(offset, page), ...]`` of the offsets where a new page starts
(empty when no block has a page). A page change never inserts text, so page breaks are no
chunk boundaries.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ragingest.loaders.base import normalize_text

HEADING, PARAGRAPH, LIST_ITEM, TABLE, CODE, HEADER, FOOTER, PAGE_NUMBER = (
    "heading",
    "paragraph",
    "list",
    "table",
    "code",
    "header",
    "footer",
    "page_number",
)

_SPACES = re.compile(r"[ \t\u00a0\u2000-\u200b\u202f\u205f\u3000]+")
# a line of a paged document that ends a sentence (a page break after it ends the paragraph)
SENTENCE_END = re.compile(r"[.!?:;…»\")]$")
_HYPHENATED = re.compile(r"[A-Za-zА-Яа-яЁё]-$")


@dataclass
class Block:
    """One block of a loaded document (heading, paragraph, list item, table, code, page
    furniture) before it is rendered to Markdown."""
    kind: str
    text: str = ""
    level: int = 0  # heading level 1-6; list nesting depth
    page: int | None = None
    rows: list[list[str]] = field(default_factory=list)  # tables
    ordered: bool = False  # numbered list item
    # pages starting inside a paragraph: (offset in ``text``, page); ``text`` must then be
    # already clean (one line, single spaces) so the offsets hold after rendering
    page_marks: list[tuple[int, int]] = field(default_factory=list)

    def fingerprint(self) -> str:
        """The fingerprint of the block's text (what boilerplate detection compares)."""
        return fingerprint(self.text)


def append_line(block: Block, text: str, page: int | None) -> None:
    """Run paragraph ``block`` on with the next line of its document, ``text`` (clean, one
    line) on ``page``: a word hyphenated at the line's end is joined without its hyphen, any
    other line after one space; a line on another page than the last one adds a page mark."""
    if _HYPHENATED.search(block.text) and text[:1].islower():
        block.text, glue = block.text[:-1], ""
    else:
        glue = " "
    last_page = block.page_marks[-1][1] if block.page_marks else block.page
    if page != last_page:
        block.page_marks.append((len(block.text) + len(glue), page or 0))
    block.text += glue + text


def fingerprint(text: str) -> str:
    """Text with digits and case folded away: for finding repeated lines and paragraphs."""
    return re.sub(r"\d+", "#", clean_inline(text).lower())


def clean_inline(text: str) -> str:
    """One line of text: whitespace runs collapsed, no line breaks, no control characters."""
    text = normalize_text(text).replace("\n", " ")
    text = "".join(ch for ch in text if ch >= " " or ch == "\t")
    return _SPACES.sub(" ", text).strip()


def clean_multiline(text: str) -> str:
    """Text keeping its line breaks: each line cleaned, runs of blank lines collapsed."""
    lines = [clean_inline(line) for line in normalize_text(text).split("\n")]
    out = "\n".join(lines)
    return re.sub(r"\n{3,}", "\n\n", out).strip()


def table_cell(text: str) -> str:
    """``text`` as one Markdown table cell: on one line, '|' escaped."""
    return clean_inline(text).replace("|", "\\|")


def markdown_table(rows: Sequence[Sequence[object]]) -> str:
    """Rows (the first is the header) as one Markdown table; ragged rows padded."""
    cells = [[table_cell("" if c is None else str(c)) for c in row] for row in rows]
    cells = [row for row in cells if any(row)]
    if not cells:
        return ""
    width = max(len(row) for row in cells)
    cells = [row + [""] * (width - len(row)) for row in cells]
    lines = ["| " + " | ".join(cells[0]) + " |", "|" + "|".join(["---"] * width) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in cells[1:]]
    return "\n".join(lines)


def html_table_rows(table_html: str) -> list[list[str]]:
    """Rows of cell texts from a ``<table>`` (colspans repeated, nested tags dropped)."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(table_html, "html.parser")
    rows = []
    for tr in soup.find_all("tr"):
        row: list[str] = []
        for cell in tr.find_all(["td", "th"]):
            text = cell.get_text(" ", strip=True)
            span = cell.get("colspan")
            repeat = int(span) if isinstance(span, str) and span.isdigit() else 1
            row.extend([text] * max(1, min(repeat, 50)))
        rows.append(row)
    return rows


def _block_text(block: Block) -> str:
    if block.kind == HEADING:
        return "#" * max(1, min(block.level, 6)) + " " + clean_inline(block.text)
    if block.kind == TABLE:
        return markdown_table(block.rows) if block.rows else clean_multiline(block.text)
    if block.kind == LIST_ITEM:
        marker = "1." if block.ordered else "-"
        return "  " * max(0, block.level) + f"{marker} " + clean_inline(block.text)
    if block.kind == CODE:
        body = normalize_text(block.text).strip("\n")
        return f"```\n{body}\n```"
    return clean_multiline(block.text)


def render(blocks: Iterable[Block]) -> tuple[str, list[tuple[int, int]]]:
    """The Markdown of ``blocks`` (page furniture left out) and its page map: sorted ``(offset,
    page)`` where each page starts."""
    parts: list[str] = []
    page_map: list[tuple[int, int]] = []
    length = 0
    previous: Block | None = None
    for block in blocks:
        if block.kind in (HEADER, FOOTER, PAGE_NUMBER):
            continue
        body = _block_text(block)
        if not body.strip():
            continue
        if parts:
            separator = "\n" if block.kind == LIST_ITEM and previous.kind == LIST_ITEM else "\n\n"  # type: ignore[union-attr]
            parts.append(separator)
            length += len(separator)
        if block.page is not None and (not page_map or page_map[-1][1] != block.page):
            page_map.append((length, block.page))
        if block.page_marks and body == block.text:
            for offset, page in block.page_marks:
                if page_map and page_map[-1][1] != page:
                    page_map.append((length + offset, page))
        parts.append(body)
        length += len(body)
        previous = block
    text = "".join(parts)
    return (text + "\n" if text else text), page_map


def strip_html(text: str) -> str:
    """``text`` with HTML tags turned into spaces and entities unescaped."""
    return html.unescape(re.sub(r"<[^>]+>", " ", text))
