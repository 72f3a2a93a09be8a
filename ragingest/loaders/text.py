"""Markdown and plain-text files: decode, normalize, read front matter; find the headings of
plain text.

Encodings (``decode``): UTF-8 with or without BOM, UTF-32/UTF-16 with a BOM, UTF-16 without
one (told by its byte pattern); otherwise, for text whose high bytes look Cyrillic, the best of
cp1251, koi8-r and cp866 by letter case (Russian text is mostly lower case; a wrong Cyrillic
code page turns it upper case); else charset-normalizer's guess. Binary data raises
``ParseError``.

Plain-text headings (``.txt``, found by patterns so heading-first can use them): numbered lines
(«1.», «1.2», «1.2.3»), «Часть/Раздел/Глава/Статья N», ALL-CAPS lines and lines underlined with
``===``/``---``, each standing alone (a blank line or the start of the text before it, no
sentence end after it). They are rewritten as ``#`` headings, ranked by kind (underlined ``===``
> Часть > Раздел > Глава > capitals > underlined ``---`` > Статья > numbering depth); a heading
on the first line whose kind occurs nowhere else is the title (H1). A text with none is marked
for the paragraph strategy. Form feeds are page breaks.

Every step is a list of edits, so the document carries a ``source_map.SourceMap`` from its
normalized Markdown back into the file as decoded (BOM kept): chunk offsets index the file.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from typing import Any

from langchain_core.documents import Document

from ragingest.errors import ParseError
from ragingest.loaders.base import FileLoader, file_metadata, read_bytes
from ragingest.loaders.source_map import (
    SOURCE_MAP_KEY,
    Edit,
    SourceMap,
    apply_edits,
    form_feed_pages,
    normalize_mapped,
)
from ragingest.schema import CONTENT_TYPE_HINT, PAGE_MAP_HINT

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?\n)---[ \t]*\n", re.DOTALL)
_KEY_VALUE = re.compile(r"^([A-Za-z_][\w-]*)\s*:\s*(.*?)\s*$", re.MULTILINE)

_CYRILLIC_CODECS = ("cp1251", "koi8_r", "cp866")
_LOWER = re.compile(r"[а-яё]")
_UPPER_INSIDE = re.compile(r"(?<=[А-Яа-яЁё])[А-ЯЁ]")
_ODD = re.compile(r"[^\x00-\x7fА-Яа-яЁё«»—–…№„“”‘’•·\u00a0°]")


def decode(data: bytes, path: object, keep_bom: bool = False) -> str:
    """Bytes → text (see the module docstring); ``ParseError`` for binary data. With
    ``keep_bom`` a byte-order mark stays, as one ``\ufeff`` code point (source offsets)."""
    bom = "\ufeff" if keep_bom else ""
    if data.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        return bom + data.decode("utf-32")
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return bom + data.decode("utf-16")
    if keep_bom and data.startswith(codecs.BOM_UTF8):
        return bom + decode(data[len(codecs.BOM_UTF8) :], path)
    if b"\x00" in data[:65536]:
        utf16 = _utf16_without_bom(data)
        if utf16 is not None:
            return utf16
        raise ParseError(path, "not a text file: binary data (NUL bytes) and no text encoding fits")
    try:
        return _check_text(data.decode("utf-8-sig"), path)
    except UnicodeDecodeError:
        pass
    sample = data[:65536]
    high = sum(1 for b in sample if b >= 0x80)
    letters = high + sum(1 for b in sample if 65 <= b <= 90 or 97 <= b <= 122)
    if letters and high / letters >= 0.3:
        best = max(_CYRILLIC_CODECS, key=lambda name: _cyrillic_score(sample, name))
        return _check_text(data.decode(best, errors="replace"), path)
    from charset_normalizer import from_bytes

    match = from_bytes(data[: 2**20]).best()
    if match is None:
        raise ParseError(path, "not a text file: no text encoding fits its bytes")
    return _check_text(data.decode(match.encoding, errors="replace"), path)


def _check_text(text: str, path: object) -> str:
    sample = text[:65536]
    controls = sum(1 for ch in sample if ch < " " and ch not in "\t\n\r\f\x0b")
    if "\x00" in sample or (sample and controls > 0.05 * len(sample)):
        raise ParseError(path, "not a text file: no text encoding fits its bytes")
    return text


def _cyrillic_score(sample: bytes, codec: str) -> float:
    text = sample.decode(codec, errors="replace")
    return (
        len(_LOWER.findall(text))
        - 2 * len(_UPPER_INSIDE.findall(text))
        - 5 * len(_ODD.findall(text))
    )


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


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """``key: value`` pairs of a leading ``---`` block, and the text after it."""
    match = _FRONT_MATTER.match(text)
    if not match:
        return {}, text
    fields = {k.lower(): v.strip("'\"") for k, v in _KEY_VALUE.findall(match.group(1))}
    return fields, text[match.end() :]


# -- plain-text headings ----------------------------------------------------------------------

_RANKS = (
    "setext1",
    "part",
    "section",
    "chapter",
    "caps",
    "setext2",
    "article",
    "num1",
    "num2",
    "num3",
    "num4",
)
_KEYWORDS = {
    "часть": "part",
    "part": "part",
    "раздел": "section",
    "section": "section",
    "глава": "chapter",
    "chapter": "chapter",
    "статья": "article",
    "article": "article",
}
_KEYWORD = re.compile(
    r"^(часть|раздел|глава|статья|part|section|chapter|article)\s+"
    r"(?:\d+(?:\.\d+)*|[IVXLC]+)\b\.?(?:\s*[.:—–-]?\s*\S.*)?$",
    re.IGNORECASE,
)
_NUMBERED = re.compile(r"^(\d{1,3}(?:\.\d{1,3}){0,3})(\.?)\s+([A-ZА-ЯЁ«\"].{0,150})$")
_UNDERLINE = re.compile(r"^(=+|-+)\s*$")
_SENTENCE_END = re.compile(r"[.;,:!?]$")
_ATX = re.compile(r"^ {0,3}#{1,6}\s+\S", re.MULTILINE)
_MAX_HEADING = 120


def _caps(line: str) -> bool:
    letters = [ch for ch in line if ch.isalpha()]
    return len(letters) >= 3 and all(ch.isupper() for ch in letters) and len(line) <= 100


def _kind(lines: list[str], i: int) -> str | None:
    """The heading kind of line ``i``, or ``None``."""
    line = lines[i].strip()
    if not line or len(line) > _MAX_HEADING or line.startswith(("#", "|", "-", "*", ">")):
        return None
    below = lines[i + 1].strip() if i + 1 < len(lines) else ""
    above = lines[i - 1].strip() if i > 0 else ""
    underline = _UNDERLINE.match(below)
    if underline and len(below) >= 3 and not _UNDERLINE.match(line):
        return "setext1" if below.startswith("=") else "setext2"
    if above:
        return None  # a heading stands alone
    keyword = _KEYWORD.match(line)
    if keyword:
        return _KEYWORDS[keyword.group(1).lower()]
    numbered = _NUMBERED.match(line)
    if numbered and not _SENTENCE_END.search(line):
        following = lines[i + 1].strip() if i + 1 < len(lines) else ""
        depth = numbered.group(1).count(".") + 1
        if following and _NUMBERED.match(following) and depth == 1 and numbered.group(2):
            return None  # «1. …» directly followed by «2. …»: a numbered list
        return f"num{min(depth, 4)}"
    if _caps(line) and not _SENTENCE_END.search(line):
        return "caps"
    return None


def text_headings(text: str) -> tuple[str, bool]:
    """Plain text with its detected headings rewritten as Markdown ``#`` lines, and whether
    any were found."""
    edits, found = heading_edits(text)
    return apply_edits(text, edits)[0] if edits else text, found


def heading_edits(text: str) -> tuple[list[Edit], bool]:
    """``text_headings`` as edits of ``text`` (``source_map.apply_edits``): a heading line's
    outer whitespace out, its ``#`` prefix inserted before its first character, a setext
    underline (with the line end before it) out."""
    if _ATX.search(text):
        return [], True
    lines = text.split("\n")
    kinds = {i: k for i in range(len(lines)) if (k := _kind(lines, i))}
    if not kinds:
        return [], False
    first_line = next((i for i, line in enumerate(lines) if line.strip()), 0)
    first_kind = kinds.get(first_line)
    title_at = None
    if first_kind and len(kinds) > 1 and list(kinds.values()).count(first_kind) == 1:
        title_at = first_line  # a heading of its own kind on the first line: the title
    used = sorted({k for i, k in kinds.items() if i != title_at}, key=_RANKS.index)
    levels = {kind: min(6, 2 + rank) for rank, kind in enumerate(used)}
    edits: list[Edit] = []
    skip = False
    at = 0  # offset of line i
    for i, line in enumerate(lines):
        start, at = at, at + len(line) + 1
        if skip:
            skip = False
            continue
        kind = kinds.get(i)
        if kind is None:
            continue
        level = 1 if i == title_at else levels[kind]
        lead = start + len(line) - len(line.lstrip())
        trail = start + len(line.rstrip())
        edits += [
            (start, lead, ""),
            (lead, lead, "#" * level + " "),
            (trail, start + len(line), ""),
        ]
        if kind.startswith("setext") and i + 1 < len(lines):
            edits.append((start + len(line), at + len(lines[i + 1]), ""))  # drop the underline
            skip = True
    return edits, True


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

    suffixes = (".md", ".markdown", ".txt", ".text")

    def _documents(self) -> Iterator[Document]:
        source = decode(read_bytes(self.path, self.max_bytes), self.path, keep_bom=True)
        text, mapping = normalize_mapped(source)
        front, body = split_front_matter(text)
        if len(body) < len(text):
            mapping = mapping.compose(apply_edits(text, [(0, len(text) - len(body), "")])[1])
        extra = {"title": front.get("title"), "doc_date": front.get("date")}
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
        metadata[SOURCE_MAP_KEY] = mapping
        if front.get("content_type"):
            metadata[CONTENT_TYPE_HINT] = front["content_type"]
        elif plain and not found:
            metadata[CONTENT_TYPE_HINT] = "paragraph"
        if len(page_map) > 1:
            metadata[PAGE_MAP_HINT] = page_map
        yield Document(page_content=body, metadata=metadata)
