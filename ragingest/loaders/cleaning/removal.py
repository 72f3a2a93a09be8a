"""Removing spans from a loaded document with every coordinate moved: ``remove`` cuts spans
out of a document's text and moves its source map (text formats), page map and box map by
the exact removed spans (never by searching the text again: a removed line's text found
elsewhere would carry its box to another page).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ragingest.loaders.cleaning.rules import Removal
from ragingest.loaders.markdown.source_map import apply_edits
from ragingest.loaders.markdown.source_offsets import source_map_of
from ragingest.schema import BOX_MAP_HINT, PAGE_MAP_HINT, SOURCE_MAP_HINT

if TYPE_CHECKING:  # the type only: removal never builds a Document
    from langchain_core.documents import Document

_BLANK = " \t\r\n"


def remove(
    document: Document, spans: Sequence[tuple[int, int]], rule: str
) -> tuple[Document, list[Removal]]:
    """``document`` without the (sorted, disjoint) ``spans`` of its text, each with the blank
    lines after it, every coordinate moved with the text: the source map (text formats), the
    page map, the box map (a line inside a removed span goes). Returns a ``Removal`` of
    ``rule`` for each span, in the offsets ``inspect`` shows (the source, for text formats)."""
    if not spans:
        return document, []
    text = document.page_content
    metadata = document.metadata
    page_map = metadata.get(PAGE_MAP_HINT) or ()
    starts = [offset for offset, _page in page_map]
    source = source_map_of(metadata)
    found: list[Removal] = []
    edits: list[tuple[int, int, str]] = []
    for start, end in spans:
        at = bisect_right(starts, start) - 1
        shown = source.span(start, end) if source is not None else (start, end)
        found.append(Removal(rule, *shown, page_map[at][1] if at >= 0 else None, text[start:end]))
        cut = end
        while cut < len(text) and text[cut] in _BLANK:
            cut += 1
        if cut == len(text):  # the last block: the blank before it goes, the final newline stays
            floor = edits[-1][1] if edits else 0
            cut = end
            while start > floor and text[start - 1] in _BLANK:
                start -= 1
        edits.append((start, cut, ""))
    out, mapping = apply_edits(text, edits)
    if source is not None:
        metadata[SOURCE_MAP_HINT] = source.compose(mapping)
    cuts = [(start, end) for start, end, _new in edits]
    if metadata.get(PAGE_MAP_HINT):
        pages: list[tuple[int, int]] = []
        for offset, page in metadata[PAGE_MAP_HINT]:
            moved = _moved(offset, cuts)
            if pages and pages[-1][0] == moved:
                pages[-1] = (moved, page)
            else:
                pages.append((moved, page))
        metadata[PAGE_MAP_HINT] = pages
    if metadata.get(BOX_MAP_HINT):
        metadata[BOX_MAP_HINT] = [
            (_moved(start, cuts), _moved(end, cuts), *rest)
            for start, end, *rest in metadata[BOX_MAP_HINT]
            if not any(s < end and start < e for s, e in cuts)
        ]
    document.page_content = out
    return document, found


def _moved(offset: int, cuts: Sequence[tuple[int, int]]) -> int:
    """``offset`` in the text with ``cuts`` removed (an offset inside a cut: the cut's place)."""
    shift = 0
    for start, end in cuts:
        if end <= offset:
            shift += end - start
        elif start < offset:
            shift += offset - start
    return offset - shift
