"""The metadata schema: every key a stored chunk carries, its type, and the stage that fills it,
and ``ChunkRecord``, the one typed value a chunk travels in from the split stage to Chroma.

``SCHEMA`` lists every metadata key that reaches Chroma. Nothing else rides in a chunk's
metadata: the embedded text, the parent section's text, the file a chunk came from and its
vector are fields of ``ChunkRecord``. The only underscore keys are ``LOADER_HINTS``: what a
loader tells the split stage on a loaded ``Document`` (never stored).

Chroma accepts only str/int/float/bool values and non-empty lists of one of them: never
``None``, never dicts; a number it can't store exactly (beyond int64, more digits than a float
holds, NaN) is stored as its digits, a string (these value rules: ``storable``, re-exported
here). ``splitters.chunk_metadata`` builds a chunk's metadata from its document's metadata and
the chunk; ``validate`` checks it against this table. Keys a content-type loader adds
(``subject``, ``price``, ...) and front-matter keys (``loaders.markdown.front_matter``: as written,
YAML types kept; one that collides with a key ragingest computes is kept as ``fm_<key>``) are kept
when Chroma stores their values.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeVar

from langchain_core.documents import Document

from ragingest.storable import (
    INT64,
    INTERNAL_PREFIX,
    MAX_EXTRA_KEYS,
    MAX_KEY_CHARS,
    MAX_VALUE_CHARS,
    RENAMED_PREFIX,
    Metadata,
    MetadataValue,
    Scalar,
    bound_value,
    exact_number,
    storable_key,
    storable_keys,
    storable_list,
    storable_number,
    storable_text,
)

__all__ = [  # the value rules of ``storable``, read here with the keys they apply to
    "INT64", "INTERNAL_PREFIX", "MAX_EXTRA_KEYS", "MAX_KEY_CHARS", "MAX_VALUE_CHARS",
    "RENAMED_PREFIX", "Metadata", "MetadataValue", "Scalar", "bound_value", "exact_number",
    "storable_key", "storable_keys", "storable_list", "storable_number", "storable_text",
]  # fmt: skip

_V = TypeVar("_V")


@dataclass(frozen=True)
class Field:
    """One metadata key of ``SCHEMA``: its type, the stage that fills it, what it holds, whether
    every chunk has it."""
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
    # what an app opens to show a citation; not part of the chunk id (``ID_EXCLUDED``): the
    # file's place when it was last parsed (a moved folder's unchanged files keep the old one)
    "file_path": Field(str, "loader", "absolute path of the file read, when it is a file", False),
    "section_path": Field(str, "splitter", "breadcrumb 'Title > Section > Subsection'"),
    "section_paths": Field(
        list, "splitter", "breadcrumb of each section a merged chunk holds", False
    ),
    "h1": Field(str, "splitter", "H1 heading above the chunk", required=False),
    "h2": Field(str, "splitter", "H2 heading above the chunk", required=False),
    "h3": Field(str, "splitter", "H3 heading above the chunk", required=False),
    "chunk_index": Field(int, "splitter", "position of the chunk in its document, from 0"),
    "total_chunks": Field(int, "splitter", "number of chunks of the document"),
    # offsets index the file as decoded for text formats, the normalized Markdown otherwise
    "start_index": Field(int, "splitter", "start offset in the source text (see above)"),
    "end_index": Field(int, "splitter", "end offset (exclusive) in the source text"),
    "token_count": Field(int, "splitter", "size of the chunk text in the splitter's unit"),
    "strategy": Field(str, "splitter", "heading | paragraph | recursive | fixed | table | ..."),
    "oversized": Field(bool, "splitter", "a whole table/code block over the chunk size"),
    "content_hash": Field(str, "splitter", "sha256 of the chunk text, 16 hex digits"),
    "parent_id": Field(str, "splitter", "sha256 of doc_id and parent span, 16 hex digits"),
    "parent_start": Field(int, "splitter", "start of the parent section (parent expansion)"),
    "parent_end": Field(int, "splitter", "end (exclusive) of the parent section"),
    "page_start": Field(int, "loader/splitter", "first page of the chunk", required=False),
    "page_end": Field(int, "loader/splitter", "last page of the chunk", required=False),
    "page_char_start": Field(int, "splitter", "start offset inside page_start", False),
    "page_char_end": Field(int, "splitter", "end offset (exclusive) inside page_end", False),
    # content types: filled by the loader of that kind of file, absent elsewhere
    "content_type": Field(str, "splitter", "document|faq|email|catalogue|ticket|paragraph", False),
    "author": Field(str, "loader", "author from the file's properties", required=False),
    "pages": Field(int, "loader", "page (slide) count of a paged format", required=False),
    "subject": Field(str, "loader", "e-mail subject", required=False),
    "from": Field(str, "loader", "e-mail sender, 'Name <address>'", required=False),
    "to": Field(str, "loader", "e-mail recipients", required=False),
    "date": Field(str, "loader", "e-mail date, ISO 8601", required=False),
    "message_id": Field(str, "loader", "e-mail Message-ID without <>", required=False),
    "in_reply_to": Field(str, "loader", "e-mail In-Reply-To id", required=False),
    "thread_id": Field(str, "loader", "first References id, else In-Reply-To, else own", False),
    "ticket_id": Field(str, "loader", "ticket id from a ticket export", required=False),
    "status": Field(str, "loader", "ticket status", required=False),
    "priority": Field(str, "loader", "ticket priority", required=False),
    "created_at": Field(str, "loader", "ticket creation date as exported", required=False),
    "updated_at": Field(str, "loader", "ticket last update/close date as exported", False),
    "row": Field(int, "loader", "catalogue card: its row (1 = first after the header)", False),
    "sheet": Field(str, "loader", "catalogue card: its sheet (multi-sheet XLSX)", False),
    # scans: filled where OCR read some of the document's pages, absent elsewhere
    "ocr": Field(bool, "loader", "some of the document's text was read by OCR", False),
    "ocr_confidence": Field(float, "splitter", "mean confidence (0-100) of the chunk's OCR'd "
                            "words (Tesseract's, of the lines its span overlaps)", False),
    "page_boxes": Field(str, "splitter", "JSON [[page, x0, y0, x1, y1], ...]: where the "
                        "chunk's OCR'd lines are, per page, 0-1 from the top left of the page "
                        "as displayed (a PDF viewer's view, /Rotate applied)", False),
    "page_rotations": Field(str, "splitter", "JSON [[page, degrees], ...], a pair per page of "
                            "page_boxes: how far OCR turned the displayed page clockwise to read "
                            "it upright (0, 90, 180, 270)", False),
    # permissions: on every chunk (and parent section) of a collection with an access policy
    "access": Field(list, "ingest", "principals that may read the document (ACCESS_KEY)", False),
}
# Catalogue cards also carry each numeric column as int/float metadata under its header,
# lower-cased with non-word runs as '_' («Цена, ₽» → 'цена'), plus 'price'/'area'/'weight'
# for «цена»/«стоимость», «площадь», «вес» (so `--where price<=5000` filters); headers that
# collide with a key above get a 'field_' prefix. Cleaning counts are in the run report.

# Permissions. ``access`` holds principal strings: ``user:NAME``, ``group:NAME``,
# ``unix:user:NAME``, ``unix:group:NAME``, or ``PUBLIC`` (every caller that names principals may
# read). A document no rule of a policy covers holds only ``NO_READER``, which no caller has
# (Chroma stores no empty list). A given Document (connector path) names its readers under the
# same key, as a list of principal strings.
ACCESS_KEY = "access"
PUBLIC_PRINCIPAL = "*"
NO_READER = "!nobody"

# What a loader tells the split stage on a loaded Document's metadata; never stored (the split
# stage turns them into fields and keys above).
CONTENT_TYPE_HINT = "_content_type"  # the loader's word on the content type (content_types)
PAGE_MAP_HINT = "_page_map"  # sorted [(offset, page), ...] of a paged format → page_start/end
TITLE_FROM_NAME_HINT = "_title_from_name"  # the title is only the file name: no breadcrumb
# what the loader's cleaning removed: counts, and each removed block with its rule
# (``loaders.cleaning.rules.CleaningCounts``), for the run report and ``inspect``
CLEANING_HINT = "_cleaning"
# text formats: loaders.markdown.source_map.SourceMap → source offsets
SOURCE_MAP_HINT = "_source_map"
# OCR'd lines: [(start, end, page, x0, y0, x1, y1, confidence, words), ...] in the text (box
# on the page as displayed, mean confidence of its words) → page_boxes, ocr_confidence
BOX_MAP_HINT = "_box_map"
SCAN_PAGES_HINT = "_scan_pages"  # the OCR'd pages: {page: degrees turned to read it upright}
NOTES_HINT = "_notes"  # list[str]: what the loader changed or lost (loaders.notes, run report)
LOST_HINT = "_partly_failed"  # True: some of the file's content is not in its documents
# joined pages whose ``access`` differ: [[page, [principal, ...]], ...], one per page document
PAGE_ACCESS_HINT = "_page_access"
LOADER_HINTS = (
    CONTENT_TYPE_HINT,
    PAGE_MAP_HINT,
    TITLE_FROM_NAME_HINT,
    CLEANING_HINT,
    SOURCE_MAP_HINT,
    BOX_MAP_HINT,
    SCAN_PAGES_HINT,
    NOTES_HINT,
    LOST_HINT,
    PAGE_ACCESS_HINT,
)


# keys a chunk's id does not hash: where the file lies is not what the chunk is (the same
# folder ingested from another place keeps its ids and embeddings), nor who may read it (a
# change of readers is written in place, ``ChunkSink.set_access``: nothing is embedded again)
ID_EXCLUDED = ("file_path", ACCESS_KEY)

DOCUMENT_KEYS = ("source", "title", "file_type", "doc_date", "language", "doc_id")


def content_id(text: str, metadata: Mapping[str, object]) -> str:
    """The id scheme of every stored chunk: LangChain ``index()``'s key with
    ``key_encoder="sha256"``, i.e. sha256 of (sha256 of ``text``) + (sha256 of ``metadata`` as
    sorted JSON), 64 hex digits. Same text and metadata, same id, so re-adding replaces."""
    content = hashlib.sha256(text.encode("utf-8")).hexdigest()
    digest = hashlib.sha256(json.dumps(metadata, sort_keys=True).encode("utf-8")).hexdigest()
    return hashlib.sha256((content + digest).encode("utf-8")).hexdigest()


def short_hash(*parts: object) -> str:
    """The first 16 hex digits of the sha256 of ``parts`` joined by U+001F."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8"))
    return digest.hexdigest()[:16]


def from_content(metadata: Mapping[str, _V]) -> tuple[dict[str, _V], list[str]]:
    """``metadata`` that came from content without its internal (``_``) keys, and the keys
    left out (empty when none): content never sets a loader hint."""
    kept = {k: v for k, v in metadata.items() if not str(k).startswith(INTERNAL_PREFIX)}
    return kept, [str(k) for k in metadata if str(k).startswith(INTERNAL_PREFIX)]


def bound_extras(metadata: dict[str, _V]) -> tuple[dict[str, _V], str]:
    """``metadata`` with at most ``MAX_EXTRA_KEYS`` keys beyond ``SCHEMA``'s (the first ones,
    in order) and no key longer than ``MAX_KEY_CHARS``; loader hints (``_`` keys) are kept.
    Returns it and a note for the run report ('' when nothing was left out)."""
    kept: dict[str, _V] = {}
    extras, dropped, first = 0, 0, ""
    for key, value in metadata.items():
        if key in SCHEMA or key.startswith("_"):
            kept[key] = value
        elif len(key) <= MAX_KEY_CHARS and extras < MAX_EXTRA_KEYS:
            kept[key] = value
            extras += 1
        else:
            dropped += 1
            first = first or key
    if not dropped:
        return metadata, ""
    shown = first if len(first) <= 40 else first[:40] + "…"
    note = (
        f"{dropped} fields not stored as metadata (over {MAX_EXTRA_KEYS} fields or keys over "
        f"{MAX_KEY_CHARS} characters, the first {shown!r}): they stay in the text"
    )
    return kept, note


def over_bounds(metadata: Mapping[str, object]) -> list[str]:
    """How ``metadata`` exceeds what a chunk may bring to Chroma (empty when within)."""
    problems = []
    extras = [k for k in metadata if k not in SCHEMA]
    if len(extras) > MAX_EXTRA_KEYS:
        problems.append(f"{len(extras)} extra keys, over {MAX_EXTRA_KEYS}")
    problems += [f"key {k[:40]!r} over {MAX_KEY_CHARS} characters" for k in extras
                 if len(k) > MAX_KEY_CHARS][:3]  # fmt: skip
    for key, value in metadata.items():
        values = value if isinstance(value, list) else [value]
        if any(isinstance(v, str) and len(v) > MAX_VALUE_CHARS for v in values):
            problems.append(f"{key} over {MAX_VALUE_CHARS} characters")
    return problems


def validate(metadata: Mapping[str, object]) -> list[str]:
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
    return problems + storable_problems(metadata)


def storable_problems(metadata: Mapping[str, object]) -> list[str]:
    """What in ``metadata`` Chroma cannot store, or may not get (``over_bounds``)."""
    problems = []
    for key, value in metadata.items():
        if storable_list(value):
            continue
        if not isinstance(value, Scalar) or value is None:
            problems.append(f"{key} is not a Chroma scalar: {value!r:.80}")
    return problems + over_bounds(metadata)


@dataclass
class ChunkRecord:
    """One chunk on its way to Chroma: what is stored (``text``, ``metadata``: only ``SCHEMA``
    keys and a loader's scalar extras), what the model embeds (``embed_text``: breadcrumb +
    text), the parent section returned by parent expansion (``parent_text``), the plan task it
    came from (``source``: the record-manager group and file-state key) and, when an engine
    computed it, its ``vector``."""

    source: str
    text: str
    metadata: dict[str, MetadataValue]
    embed_text: str
    parent_text: str
    vector: list[float] | None = None

    @property
    def id(self) -> str:
        """The chunk's id in Chroma and the record manager: sha256 over everything that
        defines the stored chunk (text, metadata, embedded text, parent text, task). The fields
        are hashed under the names earlier versions kept them in the metadata, so existing
        collections keep their ids."""
        hidden = {"_embed_text": self.embed_text, "_file": self.source}
        hidden["_parent_text"] = self.parent_text
        identity = {k: v for k, v in self.metadata.items() if k not in ID_EXCLUDED}
        return content_id(self.text, {**identity, **hidden})

    def document(self) -> Document:
        """The stored part as a LangChain ``Document`` (id set)."""
        return Document(id=self.id, page_content=self.text, metadata=dict(self.metadata))
