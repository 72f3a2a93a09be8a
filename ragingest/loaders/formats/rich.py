"""Base of the loaders of rich formats: parse to ``Block``s, clean, render Markdown.

A subclass implements ``_parse(data) -> Parsed``. Anything a parser raises that is not a
``FileError`` becomes a ``ParseError`` naming the file and the format, so a damaged file never
stops a run. Archives (docx, pptx, xlsx, odt, epub) are checked before parsing, their real
unpacked size counted and capped (``loaders.formats.archives``): a zip bomb never reaches a parser.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from langchain_core.documents import Document

from ragingest.errors import FileError, ParseError
from ragingest.loaders.base import FileLoader, file_metadata
from ragingest.loaders.cleaning.rules import CleaningRules, clean_blocks
from ragingest.loaders.formats.archives import check_archive
from ragingest.loaders.markdown.blocks import HEADING, Block, clean_inline, render
from ragingest.schema import CLEANING_HINT, PAGE_MAP_HINT


@dataclass
class Parsed:
    """What a format's parser gives: the blocks, the page count, the file's metadata, and the
    cleaning counts when it cleaned itself."""
    blocks: list[Block]
    pages: int = 0  # the number of pages (0: the format has none)
    metadata: dict[str, Any] = field(default_factory=dict)  # title, doc_date, author, ...
    counts: dict[str, int] | None = None  # set when the parser cleaned the blocks itself


class RichLoader(FileLoader):
    """Loaders that go through blocks; ``cleaning`` is set by ``loader_for``."""

    format_name = "document"
    archive = False  # a ZIP container (checked for bombs before parsing)
    cleaning: CleaningRules = CleaningRules()

    def _parse(self, data: bytes) -> Parsed:
        raise NotImplementedError

    def _documents(self) -> Iterator[Document]:
        data = self.read_bytes()
        if not data.strip():
            return
        if self.archive:
            check_archive(self.path, data, self.format_name)
        try:
            parsed = self._parse(data)
        except FileError:
            raise
        except Exception as exc:
            raise ParseError(
                self.path,
                f"cannot read it as {self.format_name} ({type(exc).__name__}: {exc}); "
                "the file may be damaged or saved in another format: re-save or re-export it",
            ) from exc
        document = self.make_document(parsed.blocks, parsed.pages, parsed.metadata, parsed.counts)
        if not document.page_content.strip() and self.has_text(data):
            raise ParseError(
                self.path,
                f"the {self.format_name} parser returned no text although the file has some "
                "(a parser model or dependency is missing?): check the install "
                "(scripts/setup.sh) and ingest it again",
            )
        yield document

    def has_text(self, data: bytes) -> bool:
        """A cheap look at the raw file: does it hold text the parser should have found?
        (The guard against a parser that silently returns nothing.)"""
        return False

    def make_document(
        self,
        blocks: list[Block],
        pages: int = 0,
        extra: Mapping[str, object] | None = None,
        counts: dict[str, int] | None = None,
    ) -> Document:
        """Clean (unless ``counts`` says it was done), render, attach the metadata and the
        format's hints (``add_hints``)."""
        if counts is None:
            kept, counts = clean_blocks(blocks, self.cleaning, pages)
        else:
            kept = blocks
        text, page_map = render(kept)
        extra = dict(extra or {})
        if not extra.get("title"):
            extra["title"] = next(
                (clean_inline(b.text) for b in kept if b.kind == HEADING and b.level == 1), None
            )
        metadata = file_metadata(self.path, self.root, text, **extra)
        metadata[CLEANING_HINT] = counts
        if page_map:
            metadata[PAGE_MAP_HINT] = page_map
        if pages:
            metadata["pages"] = pages
        document = Document(page_content=text, metadata=metadata)
        self.add_hints(document)
        return document

    def add_hints(self, document: Document) -> None:
        """What a format adds to its finished document (its loader hints); nothing here."""


def archive_has_text(data: bytes, members: str = r".*\.(?:xml|x?html?)$") -> bool:
    """Whether the XML/XHTML members of a ZIP container hold at least some words."""
    import re

    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        for info in archive.infolist():
            if re.match(members, info.filename) and info.file_size < 64 * 2**20:
                body = archive.read(info).decode("utf-8", errors="ignore")
                body = re.sub(r"<[^>]+>", " ", body)
                if len(re.findall(r"\w{3,}", body)) >= 5:
                    return True
    except (zipfile.BadZipFile, OSError, ValueError):
        return False
    return False
