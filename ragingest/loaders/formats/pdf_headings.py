"""The headings of a PDF's lines (``loaders.formats.pdf``): the title on the first page, then the
outline's entries found among the lines (an entry not found becomes a heading where its page
starts), else headings from font statistics; the lines between them become paragraphs."""

from __future__ import annotations

import itertools
import re
import statistics
from collections import Counter
from typing import Any

from ragingest.loaders.formats.pdf_lines import Line, OutlineEntry
from ragingest.loaders.markdown.blocks import (
    HEADING,
    PARAGRAPH,
    SENTENCE_END,
    Block,
    append_line,
    clean_inline,
)
from ragingest.loaders.scans.scan import sure_heading


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def _body_size(lines: list[Line]) -> float:
    weights: Counter[float] = Counter()
    for line in lines:
        weights[line.size] += len(line.text)
    return weights.most_common(1)[0][0] if weights else 0.0


def title_line(lines: list[Line], meta_title: str) -> Line | None:
    """The document title on the first page: the line equal to the PDF's Title, else the
    single largest line of page 1 when it is clearly larger than the body text (of the lines
    that may be headings: ``sure_heading``)."""
    first = [line for line in lines if line.page == lines[0].page] if lines else []
    if meta_title:
        for line in first:
            if _norm(line.text) == _norm(meta_title):
                return line
    body = _body_size(lines)
    first = [line for line in first if sure_heading(line)]
    if not first:
        return None
    largest = max(first, key=lambda line: line.size)
    others = [
        line
        for line in lines
        if line.size >= largest.size and line is not largest and sure_heading(line)
    ]
    if largest.size >= body * 1.4 and not others and len(largest.text) <= 200:
        return largest
    return None


def with_outline(lines: list[Line], outline: list[OutlineEntry], title: Line | None) -> list:
    shift = 2 if title is not None or len({e.title for e in outline if e.depth == 0}) > 1 else 1
    headings: dict[int, int] = {}  # id(line) -> level
    inserted: list[tuple[int, Block]] = []  # synthetic headings before line index
    start = 0
    for entry in outline:
        level = min(6, entry.depth + shift)
        found = _find_heading(lines, entry, start)
        if found is not None:
            headings[id(lines[found])] = level
            start = found
            continue
        index = next((i for i, line in enumerate(lines) if line.page == entry.page), len(lines))
        inserted.append((index, Block(HEADING, entry.title, level=level, page=entry.page)))
    if title is not None:
        headings[id(title)] = 1
    return _paragraphs(lines, lambda line: headings.get(id(line)), inserted)


def _find_heading(lines: list[Line], entry: OutlineEntry, start: int) -> int | None:
    want = _norm(entry.title)
    for i in range(start, len(lines)):
        line = lines[i]
        page = line.page or 0  # every PDF line has its page
        if page < entry.page:
            continue
        if page > entry.page:
            return None
        if _norm(line.text) == want:
            return i
        if want.startswith(_norm(line.text)) and i + 1 < len(lines):
            joined = _norm(line.text + " " + lines[i + 1].text)
            if joined == want:
                lines[i].text = clean_inline(line.text + " " + lines[i + 1].text)
                lines[i + 1].text = ""
                return i
    return None


def with_font_sizes(lines: list[Line], title: Line | None) -> list[Block]:
    """Headings from font statistics: lines clearly larger than the body text, ranked by
    size; bold body-size lines that stand alone come one level below (of the lines that may
    be headings: ``sure_heading``)."""
    body = _body_size(lines)
    sure = {id(line) for line in lines if sure_heading(line)}
    candidates = [
        line
        for line in lines
        if line is not title
        and line.size >= body * 1.12
        and len(line.text) <= 150
        and id(line) in sure
    ]
    sizes = sorted({line.size for line in candidates}, reverse=True)
    base = 2 if title is not None else 1
    levels = {size: min(6, base + rank) for rank, size in enumerate(sizes[:4])}
    bold_level = min(6, base + len(levels))

    def level(line: Line) -> int | None:
        if line is title:
            return 1
        if line in candidates and line.size in levels:
            return levels[line.size]
        if (
            line.bold
            and id(line) in sure
            and abs(line.size - body) < 0.6
            and len(line.text) <= 100
            and not SENTENCE_END.search(line.text)
        ):
            return bold_level
        return None

    return _paragraphs(lines, level, [])


def _paragraphs(lines: list[Line], level_of: Any, inserted: list[tuple[int, Block]]) -> list:
    """Lines → heading and paragraph blocks. A paragraph ends at a heading, a font change or
    a vertical gap clearly larger than the line pitch; it runs on across a page break when
    the last line does not end a sentence."""
    gaps = [
        a.y - b.y
        for a, b in itertools.pairwise(lines)
        if a.page == b.page and a.size == b.size and 0 < a.y - b.y < a.size * 3
    ]
    pitch = statistics.median(gaps) if gaps else 0.0
    extra = dict(inserted)
    blocks: list[Block] = []
    current: Block | None = None
    previous: Line | None = None
    for i, line in enumerate(lines):
        if i in extra:
            blocks.append(extra[i])
            current = None
        if not line.text:
            continue
        level = level_of(line)
        if level:
            blocks.append(Block(HEADING, line.text, level=level, page=line.page))
            current = None
            previous = line
            continue
        joins = (
            current is not None
            and previous is not None
            and abs(previous.size - line.size) < 0.6
            and previous.bold == line.bold
            and (
                (previous.page == line.page and (not pitch or previous.y - line.y <= pitch * 1.35))
                or (previous.page != line.page and not SENTENCE_END.search(previous.text))
            )
        )
        if joins and current is not None:
            append_line(current, line.text, line.page)
        else:
            current = Block(PARAGRAPH, line.text, page=line.page)
            blocks.append(current)
        previous = line
    for index, block in inserted:
        if index >= len(lines):
            blocks.append(block)
    return blocks
