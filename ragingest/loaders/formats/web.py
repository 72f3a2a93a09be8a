"""HTML pages with unstructured's ``partition_html``: h1–h6 → ``#`` levels, lists, tables
whole; script, style and navigation dropped (unstructured skips them). The page's
``<title>`` is the document title when present."""

from __future__ import annotations

import codecs
import re

from ragingest.loaders.formats.html_depth import flatten_deep
from ragingest.loaders.formats.partition import element_blocks, partition
from ragingest.loaders.formats.repair import better_charset
from ragingest.loaders.formats.rich import Parsed, RichLoader
from ragingest.loaders.formats.text import decode
from ragingest.loaders.markdown.blocks import clean_inline, strip_html
from ragingest.loaders.notes import add_note

_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([\w-]+)""", re.IGNORECASE)
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_DROP = re.compile(
    r"<(script|style|noscript|template|svg|nav)\b[^>]*>.*?</\1\s*>", re.IGNORECASE | re.DOTALL
)


def decode_html(data: bytes, path: object, notes: list[str] | None = None) -> str:
    """The encoding its ``<meta charset>`` names (unless that one lies: the bytes are valid
    UTF-8, or Russian in another code page; said in ``notes``), else the text decoder's
    guess."""
    match = _CHARSET.search(data[:4096])
    if match:
        declared = match.group(1).decode("ascii")
        try:
            codecs.lookup(declared)
            better = better_charset(data, declared)
            if better is not None:
                if notes is not None:
                    notes.append(
                        f"the page declares charset {declared}, but its bytes are "
                        f"{better}: decoded as {better} (detected)"
                    )
                return data.decode(better, errors="replace")
            return data.decode(declared, errors="replace")
        except (LookupError, UnicodeDecodeError):
            pass
    return decode(data, path, notes=notes)


class HtmlLoader(RichLoader):
    """HTML files (unstructured's partitioner): the title, headings, paragraphs, lists and
    tables; scripts and styles dropped."""
    suffixes = (".html", ".htm", ".xhtml")
    extra, needs = "html", ("unstructured", "bs4")
    format_name = "HTML"

    def _parse(self, data: bytes) -> Parsed:
        notes: list[str] = []
        markup = decode_html(data, self.path, notes)
        title_match = _TITLE.search(markup)
        title = clean_inline(strip_html(title_match.group(1))) if title_match else ""
        # scripts and styles go before parsing too (unstructured skips them; this keeps a
        # page that is all script from reaching the parser)
        markup = _DROP.sub(" ", markup)
        markup, note = flatten_deep(markup)
        elements = partition("html", text=markup) if markup.strip() else []
        metadata: dict[str, object] = {"title": title} if title else {}
        for each in [*notes, note] if note else notes:
            add_note(metadata, each)
        return Parsed(element_blocks(elements), metadata=metadata)

    def has_text(self, data: bytes) -> bool:
        """Whether the HTML has at least 20 characters of visible text."""
        markup = _DROP.sub(" ", decode_html(data, self.path))
        markup = re.sub(r"<(head|title)\b.*?</\1\s*>", " ", markup, flags=re.I | re.S)
        return len(clean_inline(strip_html(markup))) >= 20
