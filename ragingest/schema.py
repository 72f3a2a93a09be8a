"""The metadata schema: every key a stored chunk carries, its type, and the stage that fills it.

Chroma accepts only str/int/float/bool values: never ``None``, never dicts. ``chunk_metadata``
builds a chunk's metadata from its document's metadata and the chunk, and ``validate`` checks
it against this table. Keys a content-type loader adds (``subject``, ``price``, ...) are kept
when they are scalars.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from ragingest.splitters.chunk import Chunk

Scalar = str | int | float | bool


@dataclass(frozen=True)
class Field:
    type: type
    stage: str  # "loader" | "splitter" | "ingest"
    description: str
    required: bool = True


SCHEMA: dict[str, Field] = {
    "source": Field(str, "loader", "path of the file relative to the ingested root"),
    "title": Field(str, "loader/splitter", "first H1, else front-matter title, else file name"),
    "file_type": Field(str, "loader", "file extension without the dot, lower case"),
    "doc_date": Field(str, "loader", "front-matter date, else file mtime, ISO 8601"),
    "language": Field(str, "loader", "'ru', 'en' or 'und' (detected from the text)"),
    "doc_id": Field(str, "loader", "sha256 of source, first 16 hex digits"),
    "section_path": Field(str, "splitter", "breadcrumb 'Title > Section > Subsection'"),
    "h1": Field(str, "splitter", "H1 heading above the chunk", required=False),
    "h2": Field(str, "splitter", "H2 heading above the chunk", required=False),
    "h3": Field(str, "splitter", "H3 heading above the chunk", required=False),
    "chunk_index": Field(int, "splitter", "position of the chunk in its document, from 0"),
    "total_chunks": Field(int, "splitter", "number of chunks of the document"),
    "start_index": Field(int, "splitter", "start offset in the normalized document text"),
    "end_index": Field(int, "splitter", "end offset (exclusive) in the normalized text"),
    "token_count": Field(int, "splitter", "size of the chunk text in the splitter's unit"),
    "strategy": Field(str, "splitter", "heading | paragraph | recursive | fixed | table | ..."),
    "oversized": Field(bool, "splitter", "a whole table/code block over the size limit"),
    "chunk_id": Field(str, "splitter", "sha256 of doc_id, span and content_hash, 16 hex"),
    "content_hash": Field(str, "splitter", "sha256 of the chunk text, 16 hex digits"),
    "page_start": Field(int, "loader/splitter", "first page of the chunk", required=False),
    "page_end": Field(int, "loader/splitter", "last page of the chunk", required=False),
}

DOCUMENT_KEYS = ("source", "title", "file_type", "doc_date", "language", "doc_id")


def short_hash(*parts: object) -> str:
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8"))
    return digest.hexdigest()[:16]


def breadcrumb_title(document: dict[str, Any]) -> str:
    """The document title for breadcrumbs: empty when it is only the file name (noise to the
    model), else the loader's title."""
    if document.get("_title_from_name"):
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


def chunk_metadata(document: dict[str, Any], chunk: Chunk, index: int, total: int) -> dict:
    """Metadata of one chunk: the document's scalar keys, then the chunk's own."""
    metadata: dict[str, Scalar] = {
        k: v for k, v in document.items() if isinstance(v, Scalar) and not k.startswith("_")
    }
    source = str(document.get("source", ""))
    metadata.setdefault("source", source)
    metadata.setdefault("doc_id", short_hash(source))
    metadata["title"] = chunk.title or str(document.get("title", ""))
    metadata["section_path"] = chunk.section_path
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
        chunk_id=short_hash(metadata["doc_id"], chunk.start_index, chunk.end_index, content_hash),
    )
    page_map = document.get("_page_map")
    if page_map:
        metadata["page_start"], metadata["page_end"] = page_range(
            page_map, chunk.start_index, chunk.end_index
        )
    return metadata


def validate(metadata: dict[str, Any]) -> list[str]:
    """Problems with a chunk's metadata (empty when it is valid)."""
    problems = []
    for key, field in SCHEMA.items():
        if key not in metadata:
            if field.required and key not in ("h1", "h2", "h3"):
                problems.append(f"missing {key}")
            continue
        value = metadata[key]
        if not isinstance(value, field.type) or (field.type is int and isinstance(value, bool)):
            problems.append(f"{key} is {type(value).__name__}, want {field.type.__name__}")
    for key, value in metadata.items():
        if not isinstance(value, Scalar) or value is None:
            problems.append(f"{key} is not a Chroma scalar: {value!r}")
    return problems
