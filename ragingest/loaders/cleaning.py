"""Cleaning before chunking: running headers and footers, repeated disclaimers, empty pages and
tables of contents are noise that lowers retrieval precision. On by default; each rule can be
switched off (``CleaningRules``) and every removal is counted (the run report sums the counts).

Rules, each in one place:

- ``headers_footers``: header/footer blocks a parser marked, and lines within the first or last
  ``EDGE_BLOCKS`` blocks of a page that repeat (digits folded) on most pages;
- ``page_numbers``: a bare page number («12», «Стр. 3», «- 4 -», «Page 2 of 9») at a page edge;
- ``toc``: a table of contents: two or more lines ending in dot leaders (or a tab) and a page
  number, with a «Содержание»/«Оглавление»/«Contents» line just before them;
- ``empty_pages``: pages left with no text are counted (they contribute nothing);
- ``boilerplate``: paragraphs repeated across many files of one run (disclaimers), removed by
  ``CorpusCleaner``;
- ``quotes`` and ``signatures`` (e-mail): quoted replies and signature blocks, removed by the
  mail loader (``ragingest.loaders.mail``) and counted here.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING

from ragingest.loaders.blocks import (
    FOOTER,
    HEADER,
    HEADING,
    PAGE_NUMBER,
    PARAGRAPH,
    Block,
    clean_inline,
    remove_spans,
)
from ragingest.loaders.ocr import OcrSettings
from ragingest.loaders.scan import moved_box_map
from ragingest.loaders.source_map import diff_map, source_map_of
from ragingest.schema import BOX_MAP_HINT, CLEANING_HINT, PAGE_MAP_HINT, SOURCE_MAP_HINT

if TYPE_CHECKING:  # the type only: cleaning itself never builds a Document
    from langchain_core.documents import Document

EDGE_BLOCKS = 2  # header/footer lines are among the first/last two blocks of a page
REPEAT_SHARE = 0.6  # ... and repeat on at least 60 % of the pages (at least two)

COUNTERS = (
    "header_footer_lines",
    "page_numbers",
    "toc_lines",
    "empty_pages",
    "boilerplate_paragraphs",
    "quoted_lines",
    "signature_lines",
)

_PAGE_NUMBER = re.compile(
    r"^(?:[-–—]\s*)?(?:(?:стр(?:аница)?|page|p)\.?\s*)?\d{1,4}"
    r"(?:\s*(?:из|of|/)\s*\d{1,4})?(?:\s*[-–—])?$",
    re.IGNORECASE,
)
_TOC_LINE = re.compile(r"^\S.{1,200}?(?:\s*(?:\.{3,}|…{2,}|·{3,}|_{3,})\s*|\t+)\s*\d{1,4}$")
_TOC_TITLE = re.compile(r"^(?:содержание|оглавление|contents|table of contents)$", re.IGNORECASE)


@dataclass(frozen=True)
class CleaningRules:
    """Which cleaning steps run (all by default); ``--no-clean`` turns steps off. ``ocr``
    says how scans are read (``--ocr``, ``--ocr-lang``): it rides here because these rules
    reach every loader, in the parser workers too."""
    headers_footers: bool = True
    page_numbers: bool = True
    toc: bool = True
    empty_pages: bool = True
    boilerplate: bool = True
    quotes: bool = True
    signatures: bool = True
    ocr: OcrSettings = field(default_factory=OcrSettings)

    @classmethod
    def parse(cls, off: Iterable[str], ocr: OcrSettings | None = None) -> CleaningRules:
        """Rules with the named ones switched off (``"all"`` for every rule)."""
        names = {f.name for f in fields(cls)} - {"ocr"}
        off = {name.strip().replace("-", "_") for name in off}
        unknown = off - names - {"all"}
        if unknown:
            raise ValueError(f"unknown cleaning rule(s) {sorted(unknown)}: use {sorted(names)}")
        if "all" in off:
            off = names
        return cls(**{name: name not in off for name in names}, ocr=ocr or OcrSettings())


def new_counts() -> dict[str, int]:
    """A zero count for each cleaning counter."""
    return dict.fromkeys(COUNTERS, 0)


def add_counts(total: dict[str, int], more: Mapping[str, object] | None) -> dict[str, int]:
    """``total`` with the integer counts of ``more`` added (``total`` is updated and returned)."""
    for key, value in (more or {}).items():
        if isinstance(value, int):
            total[key] = total.get(key, 0) + value
    return total


def is_page_number(text: str) -> bool:
    """Whether ``text`` is only a page number ("12", "- 12 -", "стр. 12", ...)."""
    return bool(_PAGE_NUMBER.match(clean_inline(text)))


def is_toc_line(text: str) -> bool:
    """Whether ``text`` is a table-of-contents line (a title, a dot leader, a page number)."""
    return bool(_TOC_LINE.match(clean_inline(text)))


def clean_blocks(
    blocks: Sequence[Block], rules: CleaningRules, pages: int = 0
) -> tuple[list[Block], dict[str, int]]:
    """Apply the per-document rules to a loader's blocks; ``pages`` is the page count (0 when
    the format has no pages)."""
    counts = new_counts()
    keep = [True] * len(blocks)
    for i, block in enumerate(blocks):
        if block.kind in (HEADER, FOOTER):
            keep[i] = False
            counts["header_footer_lines"] += 1 if rules.headers_footers else 0
        elif block.kind == PAGE_NUMBER:
            keep[i] = False
            counts["page_numbers"] += 1 if rules.page_numbers else 0
    if not rules.headers_footers:  # keep parser-marked headers as plain text
        for i, block in enumerate(blocks):
            if block.kind in (HEADER, FOOTER):
                keep[i] = True
                block.kind = PARAGRAPH
    if not rules.page_numbers:
        for i, block in enumerate(blocks):
            if block.kind == PAGE_NUMBER:
                keep[i] = True
                block.kind = PARAGRAPH
    by_page: dict[int, list[int]] = {}
    for i, block in enumerate(blocks):
        if keep[i] and block.page is not None:
            by_page.setdefault(block.page, []).append(i)
    edges = {p: idx[:EDGE_BLOCKS] + idx[-EDGE_BLOCKS:] for p, idx in by_page.items()}
    if rules.page_numbers:
        for indices in edges.values():
            for i in set(indices):
                if blocks[i].kind != HEADING and is_page_number(blocks[i].text):
                    keep[i] = False
                    counts["page_numbers"] += 1
    if rules.headers_footers and len(by_page) >= 2:
        seen: Counter[str] = Counter()
        for indices in edges.values():
            seen.update({blocks[i].fingerprint() for i in indices if keep[i]})
        need = max(2, math.ceil(REPEAT_SHARE * len(by_page)))
        repeated = {fp for fp, n in seen.items() if n >= need and fp}
        for indices in edges.values():
            for i in set(indices):
                if keep[i] and blocks[i].fingerprint() in repeated:
                    keep[i] = False
                    counts["header_footer_lines"] += 1
    if rules.toc:
        counts["toc_lines"] += _drop_toc(blocks, keep)
    kept = [b for b, k in zip(blocks, keep, strict=True) if k]
    if pages:
        with_text = {b.page for b in kept if b.text.strip() or b.rows}
        counts["empty_pages"] = sum(1 for p in range(1, pages + 1) if p not in with_text)
    return kept, counts


def _drop_toc(blocks: Sequence[Block], keep: list[bool]) -> int:
    dropped = 0
    i = 0
    while i < len(blocks):
        j = i
        while j < len(blocks) and keep[j] and is_toc_line(blocks[j].text):
            j += 1
        if j - i >= 2:
            start = i
            before = i - 1
            while before >= 0 and not keep[before]:
                before -= 1
            if before >= 0 and _TOC_TITLE.match(clean_inline(blocks[before].text)):
                start = before
            for k in range(start, j):
                if keep[k]:
                    keep[k] = False
                    dropped += 1
            i = j
        else:
            i = j + 1 if j == i else j
    return dropped


# -- across documents ---------------------------------------------------------------------

BOILERPLATE_MIN_FILES = 3
BOILERPLATE_MIN_SHARE = 0.05
BOILERPLATE_MIN_CHARS = 40
FINGERPRINT_BYTES = 16  # a paragraph's digest

_PARAGRAPH = re.compile(r"[^\n](?:[^\n]|\n(?![ \t]*\n))*")


def paragraphs(text: str) -> list[tuple[int, int, bytes]]:
    """(start, end, fingerprint) of the plain paragraphs of a Markdown text (not headings,
    tables, list items or code) long enough to be boilerplate. The fingerprint is a 16-byte
    digest of the normalized paragraph: the run counts every paragraph of the corpus, so it
    holds digests, not the corpus's text."""
    out = []
    for match in _PARAGRAPH.finditer(text):
        body = match.group().rstrip()
        start = match.start()
        first = body.lstrip()[:1]
        if first in ("#", "|", "`", "-", "*", ">") or len(body.strip()) < BOILERPLATE_MIN_CHARS:
            continue
        digest = hashlib.blake2b(clean_inline(body).lower().encode(), digest_size=FINGERPRINT_BYTES)
        out.append((start, start + len(body), digest.digest()))
    return out


class CorpusCleaner:
    """Finds paragraphs repeated across files (at least ``BOILERPLATE_MIN_FILES`` files and
    ``BOILERPLATE_MIN_SHARE`` of them) and removes them from each document."""

    def __init__(self, rules: CleaningRules | None = None, cache_chars: int = 8 * 2**20) -> None:
        self.rules = rules or CleaningRules()
        self.files = 0
        self._seen: Counter[bytes] = Counter()
        self._boilerplate: set[bytes] | None = None
        self._cache: dict[str, list[Document]] = {}
        self._cache_left = cache_chars

    def remember(self, key: str, documents: list[Document]) -> None:
        """Keep a scanned file's documents (within the cache budget) for ``take``."""
        size = sum(len(d.page_content) for d in documents)
        if size <= self._cache_left:
            self._cache[key] = documents
            self._cache_left -= size

    def take(self, key: str) -> list[Document] | None:
        """The documents cached for ``key`` during the scan, removed from the cache; ``None``
        when they were not kept."""
        documents = self._cache.pop(key, None)
        if documents is not None:
            self._cache_left += sum(len(d.page_content) for d in documents)
        return documents

    def observe(self, texts: Iterable[str]) -> None:
        """Count one file's paragraphs (all its documents' texts)."""
        self.observe_digests(fp for text in texts for _s, _e, fp in paragraphs(text))

    def observe_digests(self, digests: Iterable[bytes]) -> None:
        """Count one file's distinct paragraph digests (``paragraphs``), computed elsewhere."""
        self.files += 1
        self._seen.update(set(digests))
        self._boilerplate = None

    def boilerplate_only(self) -> CorpusCleaner:
        """A cleaner that cleans as this one, from the boilerplate digests only (for workers)."""
        lean = CorpusCleaner(self.rules, cache_chars=0)
        lean.files = self.files
        lean._seen = Counter(dict.fromkeys(self.boilerplate, self.files))
        return lean

    @property
    def boilerplate(self) -> set[bytes]:
        """Fingerprints of the blocks seen in enough files to count as boilerplate (computed once
        per scan)."""
        if self._boilerplate is None:  # once per scan, not once per cleaned file
            need = max(BOILERPLATE_MIN_FILES, math.ceil(BOILERPLATE_MIN_SHARE * self.files))
            self._boilerplate = {fp for fp, n in self._seen.items() if n >= need}
        return self._boilerplate

    def clean(
        self, text: str, page_map: Sequence[tuple[int, int]] = ()
    ) -> tuple[str, list[tuple[int, int]], int]:
        """``text`` without boilerplate paragraphs (never all of it), the moved page map and
        the number removed."""
        if not self.rules.boilerplate or not self._seen:
            return text, list(page_map), 0
        known = self.boilerplate
        spans = [(s, e) for s, e, fp in paragraphs(text) if fp in known]
        if not spans:
            return text, list(page_map), 0
        out, new_map = remove_spans(text, spans, page_map)
        if not out.strip():
            return text, list(page_map), 0
        lead = len(out) - len(out.lstrip())
        if lead:
            out, new_map = remove_spans(out, [(0, lead)], new_map)
        return out, new_map, len(spans)


def apply_corpus(
    document: Document, corpus: CorpusCleaner | None, counts: dict[str, int]
) -> Document:
    """``document`` with the run's boilerplate paragraphs removed (counted into ``counts``,
    with the loader's own counts)."""
    metadata = document.metadata
    add_counts(counts, metadata.get(CLEANING_HINT))
    if corpus is None:
        return document
    text, page_map, removed = corpus.clean(document.page_content, metadata.get(PAGE_MAP_HINT, ()))
    if removed:
        mapping = source_map_of(metadata)
        if mapping is not None:  # keep source offsets exact through the removal
            metadata[SOURCE_MAP_HINT] = mapping.compose(diff_map(document.page_content, text))
        if metadata.get(BOX_MAP_HINT):  # a scan's lines: found again in the shorter text
            metadata[BOX_MAP_HINT] = moved_box_map(
                document.page_content, text, metadata[BOX_MAP_HINT]
            )
        document.page_content = text
        if page_map:
            metadata[PAGE_MAP_HINT] = page_map
        counts["boilerplate_paragraphs"] += removed
    return document
