"""A document's chunks in offsets of its source, through the ``SourceMap`` its loader left in
its metadata (``source_map``).

Contract: ``to_source(metadata, chunks)`` is the split stage's one call: for a document with a
map it returns the chunks with source offsets, source text and source parent spans, and the
metadata with the page map in source offsets (a text's pages are its form feeds:
``form_feed_pages``); without one (converted formats: PDF, DOCX, HTML, ...) both come back
unchanged, the offsets indexing the normalized Markdown, whose pages the page map gives.
``indexed_text``: the text offsets index; ``source_map_of``: the map in a document's metadata.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace

from ragingest.chunk import Chunk
from ragingest.loaders.markdown.source_map import SourceMap
from ragingest.schema import PAGE_MAP_HINT, SOURCE_MAP_HINT


def source_map_of(metadata: Mapping[str, object]) -> SourceMap | None:
    """The ``SourceMap`` a loader put in ``metadata``, ``None`` when there is none."""
    found = metadata.get(SOURCE_MAP_HINT)
    return found if isinstance(found, SourceMap) else None


def indexed_text(page_content: str, metadata: Mapping[str, object]) -> str:
    """The text stored offsets index: the source of a mapped document, else its content."""
    mapping = source_map_of(metadata)
    return mapping.source if mapping is not None else page_content


def to_source(
    metadata: Mapping[str, object], chunks: Sequence[Chunk]
) -> tuple[dict[str, object], list[Chunk]]:
    """The document metadata and chunks in source offsets (module docstring)."""
    mapping = source_map_of(metadata)
    if mapping is None:
        return dict(metadata), list(chunks)
    moved = dict(metadata)
    if metadata.get(PAGE_MAP_HINT):  # a text format's pages are its form feeds
        moved[PAGE_MAP_HINT] = form_feed_pages(mapping.source)
    out = []
    for chunk in chunks:
        start, end = mapping.span(chunk.start_index, chunk.end_index)
        parent = mapping.span(*chunk.parent) if chunk.parent is not None else None
        out.append(
            replace(
                chunk,
                text=mapping.source[start:end],
                start_index=start,
                end_index=end,
                parent=parent,
            )
        )
    return moved, out


def form_feed_pages(text: str) -> list[tuple[int, int]]:
    """``[(offset, page), ...]``: page 1 at 0, page k + 1 after the k-th form feed (pages
    that start at the same offset: the last one)."""
    pages = [(0, 1)]
    for page, feed in enumerate(re.finditer("\f", text), 2):
        if pages[-1][0] == feed.end():
            pages[-1] = (feed.end(), page)
        else:
            pages.append((feed.end(), page))
    return pages
