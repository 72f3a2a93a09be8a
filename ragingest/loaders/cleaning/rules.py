"""Cleaning before chunking: running headers and footers, repeated disclaimers, empty pages and
tables of contents are noise that lowers retrieval precision. On by default; each rule can be
switched off (``CleaningRules``) and every removal is counted (the run report sums the counts).

Rules, each in one place:

- ``headers_footers``: header/footer blocks a parser marked, and lines within the first or last
  ``EDGE_BLOCKS`` blocks of a page that repeat (digits folded) on the same side (top or foot)
  of most pages, while they are at most ``MAX_REPEATED_SHARE`` of the document's text;
- ``page_numbers``: a bare page number («12», «Стр. 3», «- 4 -», «Page 2 of 9») at a page edge;
- ``toc``: a table of contents: two or more lines ending in dot leaders (or a tab) and a page
  number, with a «Содержание»/«Оглавление»/«Contents» line just before them;
- ``empty_pages``: pages left with no text are counted (they contribute nothing);
- ``boilerplate``: paragraphs repeated at the margins of many distinct files of one run
  (disclaimers, signatures), bounded; copies are no boilerplate (``loaders.cleaning.corpus``);
- ``quotes`` and ``signatures`` (e-mail): quoted replies and signature blocks, removed by the
  mail loader (``ragingest.loaders.formats.mail``) and counted here.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields

from ragingest.loaders.markdown.blocks import (
    FOOTER,
    HEADER,
    HEADING,
    PAGE_NUMBER,
    PARAGRAPH,
    Block,
    clean_inline,
)
from ragingest.loaders.scans.ocr import OcrSettings

EDGE_BLOCKS = 2  # header/footer lines are among the first/last two blocks of a page
REPEAT_SHARE = 0.6  # ... and repeat on at least 60 % of the pages (at least two)
MAX_REPEATED_SHARE = 0.25  # ... and are never more than a quarter of the document's text

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


@dataclass(frozen=True)
class Removal:
    """One piece of text cleaning removed from a document: the ``rule`` that decided it, its
    span in the text ``inspect`` shows for the document (source offsets for text formats;
    None for what a loader's rule took out before the text was rendered), the page it was on
    (None: no pages) and its ``text``."""

    rule: str
    start: int | None
    end: int | None
    page: int | None
    text: str

    def as_dict(self) -> dict[str, object]:
        """The removal as JSON-ready data (the run report, ``inspect``)."""
        return {
            "rule": self.rule,
            "start": self.start,
            "end": self.end,
            "page": self.page,
            "text": self.text,
        }


class CleaningCounts(dict[str, int]):
    """A document's cleaning counts (``COUNTERS``), with the ``Removal`` of each block the
    loader's rules took out (``removed``): what the run report lists per file."""

    def __init__(self, *args: object, removed: list[Removal] | None = None) -> None:
        super().__init__(*args)
        self.removed: list[Removal] = removed or []

    def __reduce__(self) -> tuple[object, ...]:  # documents cross the parser worker's pipe
        return (CleaningCounts, (dict(self),), {"removed": self.removed})


def removals_of(counts: object) -> list[Removal]:
    """The removals a loader recorded with its counts (none for plain counts)."""
    return list(counts.removed) if isinstance(counts, CleaningCounts) else []


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
    the format has no pages). The counts are a ``CleaningCounts``: each removed block listed
    with its rule."""
    counts = CleaningCounts(new_counts())
    keep = [True] * len(blocks)
    why: dict[int, str] = {}  # the rule that removed block i
    for i, block in enumerate(blocks):
        if block.kind in (HEADER, FOOTER):
            keep[i] = False
            counts["header_footer_lines"] += 1 if rules.headers_footers else 0
        elif block.kind == PAGE_NUMBER:
            keep[i], why[i] = False, "page_numbers"
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
                    keep[i], why[i] = False, "page_numbers"
                    counts["page_numbers"] += 1
    if rules.headers_footers and len(by_page) >= 2:
        # a running header keeps its side of the page: a line atop one page and at the foot
        # of another is body text (the last words of a wrapped sentence), not a header
        ends = [
            (page, side, i, blocks[i].fingerprint())
            for page, idx in by_page.items()
            for side, slots in (("top", idx[:EDGE_BLOCKS]), ("foot", idx[-EDGE_BLOCKS:]))
            for i in slots
            if keep[i]
        ]
        on_pages = {(page, side, fp) for page, side, _i, fp in ends}  # once a page
        seen = Counter((side, fp) for _page, side, fp in on_pages)
        need = max(2, math.ceil(REPEAT_SHARE * len(by_page)))
        found = {i for _page, side, i, fp in ends if fp and seen[side, fp] >= need}
        text = sum(len(b.text) for b, k in zip(blocks, keep, strict=True) if k)
        if sum(len(blocks[i].text) for i in found) <= MAX_REPEATED_SHARE * text:
            for i in found:  # else the "header" is the body itself (numbered, repetitive)
                keep[i] = False
                counts["header_footer_lines"] += 1
    if rules.toc:
        counts["toc_lines"] += _drop_toc(blocks, keep, why)
    kept = [b for b, k in zip(blocks, keep, strict=True) if k]
    counts.removed = [
        Removal(why.get(i, "headers_footers"), None, None, block.page, clean_inline(block.text))
        for i, (block, k) in enumerate(zip(blocks, keep, strict=True))
        if not k and block.text.strip()
    ]
    if pages:
        with_text = {b.page for b in kept if b.text.strip() or b.rows}
        counts["empty_pages"] = sum(1 for p in range(1, pages + 1) if p not in with_text)
    return kept, counts


def _drop_toc(blocks: Sequence[Block], keep: list[bool], why: dict[int, str]) -> int:
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
                    keep[k], why[k] = False, "toc"
                    dropped += 1
            i = j
        else:
            i = j + 1 if j == i else j
    return dropped
