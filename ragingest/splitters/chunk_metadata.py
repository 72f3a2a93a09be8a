"""A chunk's metadata, built from its document's metadata and the chunk (``chunk_metadata``):
the document's storable keys, then the chunk's own (``schema.SCHEMA`` lists them all), with the
pages, OCR boxes, their pages' turns and OCR confidence its span covers. Every splitter and the
split stage build it here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import cast

from ragingest.chunk import Chunk
from ragingest.schema import (
    ACCESS_KEY,
    BOX_MAP_HINT,
    PAGE_MAP_HINT,
    SCAN_PAGES_HINT,
    TITLE_FROM_NAME_HINT,
    MetadataValue,
    Scalar,
    bound_value,
    short_hash,
    storable_list,
)


def breadcrumb_title(document: Mapping[str, object]) -> str:
    """The document title for breadcrumbs: empty when it is only the file name (noise to the
    model), else the loader's title."""
    if document.get(TITLE_FROM_NAME_HINT):
        return ""
    return str(document.get("title", ""))


def page_range(page_map: list[tuple[int, int]], start: int, end: int) -> tuple[int, int]:
    """Pages of ``[start, end)`` from a sorted ``[(offset, page), ...]`` map."""
    first = last = page_map[0][1]
    for offset, page in page_map:
        if offset <= start:
            first = page
        if offset < end:
            last = page
    return first, last


def page_boxes(box_map: Iterable[Sequence[float]], start: int, end: int) -> str:
    """The ``page_boxes`` of ``[start, end)``: the union of the boxes of the OCR'd lines it
    overlaps, one box per page, as JSON ``[[page, x0, y0, x1, y1], ...]`` ('' if none)."""
    boxes: dict[int, list[float]] = {}
    for line_start, line_end, page, *rest in box_map:
        box = rest[:4]
        if line_start < end and line_end > start:
            got = boxes.setdefault(int(page), list(box))
            got[:] = [min(got[0], box[0]), min(got[1], box[1]),
                      max(got[2], box[2]), max(got[3], box[3])]  # fmt: skip
    return json.dumps([[page, *box] for page, box in sorted(boxes.items())]) if boxes else ""


def ocr_confidence(box_map: Iterable[Sequence[float]], start: int, end: int) -> float | None:
    """The mean confidence (0-100) of the OCR'd words of the lines ``[start, end)`` overlaps
    (each line's mean weighted by its words), to 0.1; None where it overlaps none."""
    total = words = 0.0
    for line_start, line_end, _page, _x0, _y0, _x1, _y1, confidence, count in box_map:
        if line_start < end and line_end > start:
            total += confidence * count
            words += count
    return round(total / words, 1) if words else None


def page_rotations(boxes: str, turns: Mapping[object, object]) -> str:
    """For the pages of ``boxes`` (``page_boxes``) the degrees OCR turned each (``turns``:
    page → degrees, ``schema.SCAN_PAGES_HINT``), as JSON ``[[page, degrees], ...]``."""
    by_page = {int(str(page)): int(str(degrees)) for page, degrees in turns.items()}
    pages = [int(entry[0]) for entry in json.loads(boxes)]
    return json.dumps([[page, by_page.get(page, 0)] for page in pages])


def chunk_metadata(
    document: Mapping[str, object], chunk: Chunk, index: int, total: int
) -> dict[str, MetadataValue]:
    """Metadata of one chunk: the document's scalar keys, then the chunk's own."""
    metadata: dict[str, MetadataValue] = {
        k: v
        for k, v in document.items()
        if (isinstance(v, Scalar) or storable_list(v)) and not k.startswith("_")
    }
    source = str(document.get("source", ""))
    metadata.setdefault("source", source)
    metadata.setdefault("doc_id", short_hash(source))
    metadata["title"] = chunk.title or str(document.get("title", ""))
    metadata["section_path"] = chunk.section_path
    if chunk.sections:
        metadata["section_paths"] = chunk.section_paths
    for level, heading in chunk.headings:
        metadata[f"h{level}"] = heading
    content_hash = short_hash(chunk.text)
    metadata.update(
        chunk_index=index,
        total_chunks=total,
        start_index=chunk.start_index,
        end_index=chunk.end_index,
        token_count=chunk.token_count,
        strategy=chunk.strategy,
        oversized=chunk.oversized,
        content_hash=content_hash,
    )
    parent_start, parent_end = chunk.parent_span
    metadata.update(
        parent_id=short_hash(metadata["doc_id"], "parent", parent_start, parent_end),
        parent_start=parent_start,
        parent_end=parent_end,
    )
    page_map = cast("list[tuple[int, int]] | None", document.get(PAGE_MAP_HINT))
    if page_map:
        metadata["page_start"], metadata["page_end"] = page_range(
            page_map, chunk.start_index, chunk.end_index
        )
        starts = [(offset, offset) for offset, _page in page_map]  # where each page begins
        first, last = page_range(starts, chunk.start_index, chunk.end_index)
        metadata["page_char_start"] = max(0, chunk.start_index - first)
        metadata["page_char_end"] = max(0, chunk.end_index - last)
    box_map = cast("list[Sequence[float]] | None", document.get(BOX_MAP_HINT))
    boxes = page_boxes(box_map or (), chunk.start_index, chunk.end_index)
    if boxes:
        metadata["page_boxes"] = boxes
        turns = cast("Mapping[object, object]", document.get(SCAN_PAGES_HINT) or {})
        metadata["page_rotations"] = page_rotations(boxes, turns)
    confidence = ocr_confidence(box_map or (), chunk.start_index, chunk.end_index)
    if confidence is not None:
        metadata["ocr_confidence"] = confidence
    # the readers are never cut (a cut list would lose readers silently)
    return {k: v if k == ACCESS_KEY else bound_value(v) for k, v in metadata.items()}
