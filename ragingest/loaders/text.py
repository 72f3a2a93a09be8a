"""Markdown and plain-text files: decode, normalize, read front matter."""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from typing import Any

from langchain_core.documents import Document

from ragingest.errors import ParseError
from ragingest.loaders.base import FileLoader, file_metadata, normalize_text, read_bytes

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?\n)---[ \t]*\n", re.DOTALL)
_KEY_VALUE = re.compile(r"^([A-Za-z_][\w-]*)\s*:\s*(.*?)\s*$", re.MULTILINE)


def decode(data: bytes, path: object) -> str:
    """UTF-8 (with or without BOM) or UTF-16 with a BOM; else the best guess of
    charset-normalizer (cp1251, koi8-r, ...); ``ParseError`` for binary data."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    if best is None or "\x00" in str(best):
        raise ParseError(path, "not a text file: no text encoding fits its bytes")
    return str(best)


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """``key: value`` pairs of a leading ``---`` block, and the text after it."""
    match = _FRONT_MATTER.match(text)
    if not match:
        return {}, text
    fields = {k.lower(): v.strip("'\"") for k, v in _KEY_VALUE.findall(match.group(1))}
    return fields, text[match.end() :]


class TextLoader(FileLoader):
    """``.md``, ``.markdown``, ``.txt``: the text itself is the normalized Markdown."""

    suffixes = (".md", ".markdown", ".txt")

    def _documents(self) -> Iterator[Document]:
        text = normalize_text(decode(read_bytes(self.path, self.max_bytes), self.path))
        front, body = split_front_matter(text)
        extra = {"title": front.get("title"), "doc_date": front.get("date")}
        yield Document(
            page_content=body, metadata=file_metadata(self.path, self.root, body, **extra)
        )
