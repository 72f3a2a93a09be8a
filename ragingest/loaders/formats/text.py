"""Markdown and plain-text files: decode, normalize, read front matter; find the headings of
plain text.

Encodings (``decode``): UTF-8 with or without BOM, UTF-32/UTF-16 with a BOM, UTF-16 without
one (told by its byte pattern); otherwise, for text whose high bytes look Cyrillic, the best of
cp1251, koi8-r and cp866 by letter case (Russian text is mostly lower case; a wrong Cyrillic
code page turns it upper case); else charset-normalizer's guess. Binary data raises
``ParseError``.

Plain-text headings (``.txt``) are found by ``plain_headings``. Form feeds are page breaks.

Every step is a list of edits, so the document carries a ``source_map.SourceMap`` from its
normalized Markdown back into the file as decoded (BOM kept): chunk offsets index the file.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator

from langchain_core.documents import Document

from ragingest.errors import ParseError
from ragingest.loaders.base import FileLoader, file_metadata
from ragingest.loaders.formats.repair import (
    CYRILLIC_CODECS,
    broken_bound,
    cyrillic_score,
    mostly_high_bytes,
    nul_offsets,
    offsets_note,
    repair_utf8,
)
from ragingest.loaders.markdown.front_matter import (
    PARSE_NOTE,
    front_matter_metadata,
    read_front_matter,
    renamed_note,
    special,
)
from ragingest.loaders.markdown.plain_headings import heading_edits
from ragingest.loaders.markdown.source_map import Edit, SourceMap, apply_edits, normalize_mapped
from ragingest.loaders.markdown.source_offsets import form_feed_pages
from ragingest.loaders.notes import add_note
from ragingest.schema import CONTENT_TYPE_HINT, PAGE_MAP_HINT, SOURCE_MAP_HINT


def decode(
    data: bytes, path: object, keep_bom: bool = False, notes: list[str] | None = None
) -> str:
    """Bytes → text (see the module docstring); ``ParseError`` for binary data. With
    ``keep_bom`` a byte-order mark stays, as one ``\ufeff`` code point (source offsets). A
    few broken UTF-8 bytes or NULs (``loaders.formats.repair``) become U+FFFD, said in ``notes``."""
    bom = "\ufeff" if keep_bom else ""
    if data.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        return bom + data.decode("utf-32")
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return bom + data.decode("utf-16")
    if keep_bom and data.startswith(codecs.BOM_UTF8):
        skip = len(codecs.BOM_UTF8)
        inner: list[str] = []
        text = decode(data[skip:], path, notes=inner)
        if notes is not None:  # offsets into the file: the BOM's bytes count
            notes += [_shift_offsets(note, skip) for note in inner]
        return bom + text
    nuls = data.count(b"\x00", 0, 65536)
    if nuls:
        utf16 = _utf16_without_bom(data)
        if utf16 is not None:
            return utf16
        if nuls > broken_bound(min(len(data), 65536)):
            raise ParseError(
                path, "not a text file: binary data (NUL bytes) and no text encoding fits"
            )
    try:
        return _repaired(data.decode("utf-8-sig"), path, notes, data)
    except UnicodeDecodeError:
        pass
    repaired = repair_utf8(data)
    if repaired is not None:
        text, offsets = repaired
        if notes is not None:
            notes.append(offsets_note("invalid UTF-8 byte", offsets))
        return _repaired(text, path, notes, data)
    sample = data[:65536]
    if mostly_high_bytes(sample):
        best = max(CYRILLIC_CODECS, key=lambda name: cyrillic_score(sample, name))
        return _repaired(data.decode(best, errors="replace"), path, notes, data)
    from charset_normalizer import from_bytes

    match = from_bytes(data[: 2**20]).best()
    if match is None:
        raise ParseError(path, "not a text file: no text encoding fits its bytes")
    return _repaired(data.decode(match.encoding, errors="replace"), path, notes, data)


def _shift_offsets(note: str, by: int) -> str:
    head, sep, tail = note.partition(" offset")
    if not sep:
        return note
    numbers, colon, rest = tail.partition(":")
    shifted = re.sub(r"\d+", lambda m: str(int(m.group()) + by), numbers)
    return f"{head}{sep}{shifted}{colon}{rest}"


def _repaired(text: str, path: object, notes: list[str] | None, data: bytes) -> str:
    """``text`` (decoded from ``data`` by a codec that keeps NUL a NUL) checked
    (``_check_text``), its few NULs as U+FFFD (noted with their byte offsets)."""
    if "\x00" in text:
        offsets = nul_offsets(data)
        if len(offsets) > broken_bound(len(data)):
            raise ParseError(
                path, "not a text file: binary data (NUL bytes) and no text encoding fits"
            )
        text = text.replace("\x00", "\ufffd")
        if notes is not None:
            notes.append(offsets_note("NUL byte", offsets))
    return _check_text(text, path)


def _check_text(text: str, path: object) -> str:
    sample = text[:65536]
    controls = sum(1 for ch in sample if ch < " " and ch not in "\t\n\r\f\x0b")
    if "\x00" in sample or (sample and controls > 0.05 * len(sample)):
        raise ParseError(path, "not a text file: no text encoding fits its bytes")
    return text


def _utf16_without_bom(data: bytes) -> str | None:
    sample = data[:8192]
    if len(sample) < 8 or len(data) % 2:
        return None
    for offset, codec in ((1, "utf-16-le"), (0, "utf-16-be")):
        high = sample[offset::2]
        low = sample[1 - offset :: 2]
        top = sorted((high.count(v) for v in set(high)), reverse=True)
        if sum(top[:2]) >= 0.9 * len(high) and len(set(low)) > len(set(high)) + 4:
            try:
                return _check_text(data.decode(codec), "")
            except (UnicodeDecodeError, ParseError):
                return None
    return None


def page_edits(text: str) -> list[Edit]:
    """Form feeds are page breaks: as edits, each form feed becomes a line end."""
    return [(m.start(), m.end(), "\n") for m in re.finditer("\f", text)]


def _source_pages(mapping: SourceMap) -> list[tuple[int, int]]:
    """The page map from the form feeds of the source (a page break on a heading line, whose
    outer whitespace the heading rewrite drops, still counts)."""
    page_map: list[tuple[int, int]] = []
    for offset, page in form_feed_pages(mapping.source):
        if page_map and page_map[-1][0] == mapping.normalized(offset):
            page_map.pop()
        page_map.append((mapping.normalized(offset), page))
    return page_map


class TextLoader(FileLoader):
    """``.md``, ``.markdown``, ``.txt``: the text itself is the normalized Markdown; in
    ``.txt``, headings are detected (module docstring)."""

    suffixes = (".md", ".markdown", ".mdx", ".txt", ".text")

    def _documents(self) -> Iterator[Document]:
        notes: list[str] = []
        data = self.read_bytes()
        source = decode(data, self.path, keep_bom=True, notes=notes)
        text, mapping = normalize_mapped(source)
        front, body = read_front_matter(text)
        if len(body) < len(text):
            mapping = mapping.compose(apply_edits(text, [(0, len(text) - len(body), "")])[1])
        extra = {"title": special(front, "title"), "doc_date": special(front, "date")}
        plain = self.path.suffix.lower() in (".txt", ".text")
        page_map: list[tuple[int, int]] = []
        found = True
        if plain:
            edits, found = heading_edits(body)
            if edits:
                body, moved = apply_edits(body, edits)
                mapping = mapping.compose(moved)
            if "\f" in body:  # form feeds become line ends, one for one
                body, moved = apply_edits(body, page_edits(body))
                mapping = mapping.compose(moved)
            page_map = _source_pages(mapping)
        metadata = file_metadata(self.path, self.root, body, **extra)
        for key, value in front_matter_metadata(front).items():
            metadata.setdefault(key, value)
        if PARSE_NOTE in front:
            notes.append(str(front[PARSE_NOTE]))
        if renamed_note(front):
            notes.append(renamed_note(front))
        metadata[SOURCE_MAP_HINT] = mapping
        if special(front, "content_type"):
            metadata[CONTENT_TYPE_HINT] = special(front, "content_type")
        elif plain and not found:
            metadata[CONTENT_TYPE_HINT] = "paragraph"
        if len(page_map) > 1:
            metadata[PAGE_MAP_HINT] = page_map
        for note in notes:
            add_note(metadata, note)
        yield Document(page_content=body, metadata=metadata)
