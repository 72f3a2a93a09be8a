"""Any loader's Documents → our normalized documents: pages and elements joined, front matter
as metadata, the document keys of ``ragingest.schema`` filled.

Contract of ``normalize_documents(documents)``, per ``metadata["source"]`` (in input order):

- documents that are pages (``page``/``page_number`` metadata: PyPDFLoader, PyMuPDFLoader,
  PyPDFium2Loader, ...) or unstructured elements (``category`` metadata: UnstructuredLoader,
  ``mode="elements"`` loaders) become ONE document: its text is the normalized Markdown our
  own loaders render (``loaders.markdown.blocks.render``), with ``_page_map`` where pages are known,
  so page breaks make no chunk boundaries and chunks get ``page_start``/``page_end``; pages
  that name different readers (``metadata["access"]``) keep them, each page's list in
  ``_page_access`` (a page without one: nobody), so each chunk gets its pages'. Running
  headers/footers, page numbers and a table of contents are cleaned by the rules of
  ``loaders.cleaning.rules`` (``clean_blocks``; each rule switchable, counts in ``_cleaning``).
  Lines of a page are joined into paragraphs (a paragraph runs on across a page break when
  its last line ends no sentence); numbered lines standing alone («1.», «1.2.») and short
  lines that stand alone become headings; the line equal to the metadata title is the H1
  (``loaders.markdown.page_lines``);
- any other document stays one document; a leading YAML ``---`` front matter goes into the
  metadata by the rule of ``loaders.markdown.front_matter`` (``title``, ``date`` → ``doc_date``,
  ``content_type``; other keys as written, YAML types kept) and out of the text; ``.txt``
  sources get the plain-text heading detection of ``loaders.formats.text``; a ``SourceMap`` leads
  back into the ``page_content`` given, so chunk offsets index that text;
- documents we produced (``_title_from_name`` set by ``loaders.base.file_metadata``) pass
  through unchanged.

Several documents of one source that are neither (CSVLoader rows, one document per record)
stay separate and get distinct ``doc_id``s, so their parents never mix. Everything here is
deterministic: a source whose loader output did not change gives identical documents.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from langchain_core.documents import Document

from ragingest.loaders.base import detect_language
from ragingest.loaders.cleaning.rules import CleaningRules, clean_blocks
from ragingest.loaders.formats.partition import element_blocks
from ragingest.loaders.markdown.blocks import (
    HEADING,
    clean_inline,
    render,
)
from ragingest.loaders.markdown.front_matter import (
    PARSE_NOTE,
    front_matter_metadata,
    read_front_matter,
    renamed_note,
    special,
)
from ragingest.loaders.markdown.page_lines import PageLine, page_lines, page_of, paragraphs
from ragingest.loaders.markdown.plain_headings import heading_edits
from ragingest.loaders.markdown.source_map import apply_edits, normalize_mapped
from ragingest.loaders.notes import add_note
from ragingest.schema import (
    ACCESS_KEY,
    CLEANING_HINT,
    CONTENT_TYPE_HINT,
    DOCUMENT_KEYS,
    NO_READER,
    PAGE_ACCESS_HINT,
    PAGE_MAP_HINT,
    SCHEMA,
    SOURCE_MAP_HINT,
    TITLE_FROM_NAME_HINT,
    short_hash,
)

_PAGE_KEYS = ("page", "page_number")
_PER_PAGE = {
    "page",
    "page_number",
    "page_label",
    "total_pages",
    "coordinates",
    "category",
    "category_depth",
    "element_id",
    "parent_id",
    "text_as_html",
    "emphasized_text_contents",
    "emphasized_text_tags",
    "detection_class_prob",
    "last_modified",
    "links",
}
# keys this module or the splitter compute: a loader's value for them is not copied
_RESERVED = {*DOCUMENT_KEYS, "page_start", "page_end"} | {
    key for key, spec in SCHEMA.items() if spec.stage == "splitter"
}


def is_paged(document: Document) -> bool:
    """Whether ``document`` is one page of a paged loader's output (it has a page key)."""
    return any(key in document.metadata for key in _PAGE_KEYS)


def is_element(document: Document) -> bool:
    """Whether ``document`` is one element of an unstructured loader's output."""
    return "category" in document.metadata and "element_id" in document.metadata


def normalize_documents(
    documents: Iterable[Document], cleaning: CleaningRules | None = None
) -> list[Document]:
    """The normalized documents of ``documents`` (module docstring), grouped by source."""
    rules = cleaning or CleaningRules()
    groups: dict[str, list[Document]] = {}
    for document in documents:
        groups.setdefault(str(document.metadata.get("source", "")), []).append(document)
    out: list[Document] = []
    for source, group in groups.items():
        if source:
            out.extend(normalize_source(source, group, rules))
        else:  # no key to tell documents apart: nothing is joined
            out.extend(normalize_source(source, [d], rules)[0] for d in group)
    return out


def normalize_source(source: str, group: list[Document], rules: CleaningRules) -> list[Document]:
    """The normalized documents of one source's loader output."""
    if all(TITLE_FROM_NAME_HINT in d.metadata for d in group):
        return list(group)
    if len(group) > 1 and all(is_paged(d) or is_element(d) for d in group):
        return [_joined(source, group, rules)]
    if len(group) == 1:
        return [_single(source, group[0], doc_id=short_hash(source))]
    return [_single(source, d, doc_id=short_hash(source, "#", i)) for i, d in enumerate(group)]


def _single(source: str, document: Document, doc_id: str) -> Document:
    """One document as it is: normalized, front matter out into the metadata (``front_matter``),
    with a ``SourceMap`` back into ``document.page_content`` so chunk offsets index the text
    the caller passed."""
    text, mapping = normalize_mapped(document.page_content)
    front, body = read_front_matter(text)
    if len(body) < len(text):
        mapping = mapping.compose(apply_edits(text, [(0, len(text) - len(body), "")])[1])
    metadata = {k: v for k, v in document.metadata.items() if k not in _RESERVED}
    for key, value in front_matter_metadata(front).items():
        metadata.setdefault(key, value)
    extra: dict[str, Any] = {"title": special(front, "title") or document.metadata.get("title")}
    extra["doc_date"] = special(front, "date") or _date_of(document.metadata)
    content_type = special(front, "content_type")
    if _suffix(source) in ("txt", "text"):
        edits, found = heading_edits(body)
        if edits:
            body, moved = apply_edits(body, edits)
            mapping = mapping.compose(moved)
        content_type = content_type or ("" if found else "paragraph")
    metadata.update(document_keys(source, body, doc_id=doc_id, **extra))
    metadata[SOURCE_MAP_HINT] = mapping
    for note in (str(front.get(PARSE_NOTE, "")), renamed_note(front)):
        if note:
            add_note(metadata, note)
    if content_type:
        metadata[CONTENT_TYPE_HINT] = content_type
    return Document(page_content=body, metadata=metadata, id=document.id)


def _joined(source: str, group: list[Document], rules: CleaningRules) -> Document:
    common = _common_metadata(group)
    title = str(common.get("title") or "")
    if all(is_element(d) for d in group):
        blocks = element_blocks(_elements(group))
        pages = len({b.page for b in blocks if b.page is not None})
        kept, counts = clean_blocks(blocks, rules, pages if pages > 1 else 0)
    else:
        lines = [line for d in group for line in page_lines(d)]
        pages = len({page_of(d) for d in group})
        cleaned, counts = clean_blocks(lines, rules, pages)
        kept = paragraphs([b for b in cleaned if isinstance(b, PageLine)], title)
    text, page_map = render(kept)
    metadata = {k: v for k, v in common.items() if k not in _PER_PAGE and k not in _RESERVED}
    if not title:
        title = next((clean_inline(b.text) for b in kept if b.kind == HEADING and b.level == 1), "")
    metadata.update(
        document_keys(
            source, text, title=title, doc_date=_date_of(common), doc_id=short_hash(source)
        )
    )
    metadata[CLEANING_HINT] = counts
    page_readers = _page_readers(group)
    if page_readers is not None:
        metadata[PAGE_ACCESS_HINT] = page_readers
    if len(page_map) > 1:
        metadata[PAGE_MAP_HINT] = page_map
    if pages > 1:
        metadata["pages"] = pages
    return Document(page_content=text, metadata=metadata)


def document_keys(
    source: str, text: str, *, doc_id: str, **extra: object
) -> dict[str, object]:
    """The document keys of ``ragingest.schema`` for a document of ``source`` (a path, a URL
    or any key a loader set); ``extra`` (title, doc_date) wins where given."""
    name = source.rstrip("/").rsplit("/", 1)[-1] or source
    metadata: dict[str, Any] = {
        "source": source,
        "title": Path(name).stem or name,
        "file_type": _suffix(source) or "document",
        "doc_date": _mtime(source),
        "language": detect_language(text),
        "doc_id": doc_id,
    }
    metadata.update({k: str(v) for k, v in extra.items() if v not in (None, "")})
    metadata[TITLE_FROM_NAME_HINT] = not extra.get("title")
    if Path(source).is_file():  # where an app opens it to cite
        metadata["file_path"] = os.path.abspath(source)
    return metadata


def _suffix(source: str) -> str:
    if "://" in source and not source.startswith("file://"):
        path = source.split("://", 1)[1].split("?", 1)[0]
        return Path(path).suffix.lower().lstrip(".") if "/" in path else ""
    return Path(source).suffix.lower().lstrip(".")


def _mtime(source: str) -> str:
    """The file's mtime when the source is a readable path (deterministic), else ''."""
    try:
        stamp = Path(source).stat().st_mtime
    except (OSError, ValueError):
        return ""
    return dt.datetime.fromtimestamp(stamp, tz=dt.UTC).isoformat(timespec="seconds")


def _date_of(metadata: Mapping[str, object]) -> str | None:
    for key in ("doc_date", "creationdate", "creation_date", "date", "last_modified"):
        value = metadata.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _page_readers(group: list[Document]) -> list[list[object]] | None:
    """``[[page, readers], ...]`` of pages that do not all name the same readers
    (``metadata["access"]``), one per document, as given (the pipeline checks them); a page
    without a list is readable by no one (``NO_READER``): where a connector names readers
    for some pages, the others must not fall to a wider rule. None when the pages agree."""
    given = [d.metadata.get(ACCESS_KEY) for d in group]
    if all(value == given[0] for value in given):
        return None  # one list (or none) for every page: the document's own
    return [
        [page_of(d), [NO_READER] if value is None else value]
        for d, value in zip(group, given, strict=True)
    ]


def _common_metadata(group: list[Document]) -> dict[str, object]:
    """The metadata every document of the group agrees on."""
    common = dict(group[0].metadata)
    for document in group[1:]:
        common = {k: v for k, v in common.items() if document.metadata.get(k) == v}
    return common


def _elements(group: list[Document]) -> list[SimpleNamespace]:
    """Element documents as the element objects ``partition.element_blocks`` reads."""
    out = []
    for document in group:
        metadata = document.metadata
        out.append(
            SimpleNamespace(
                category=str(metadata.get("category", "")),
                text=document.page_content,
                metadata=SimpleNamespace(
                    page_number=metadata.get("page_number"),
                    category_depth=metadata.get("category_depth"),
                    text_as_html=metadata.get("text_as_html"),
                ),
            )
        )
    return out
