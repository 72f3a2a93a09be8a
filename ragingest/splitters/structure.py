"""Stage 1 of heading-first (docs/rules.md): find the structure of a Markdown text.

Written by hand because LangChain's ``MarkdownHeaderTextSplitter`` rewrites whitespace and
returns no offsets, and the splitters promise exact ``[start, end)`` spans.

Contract: ``analyze(text)`` returns the ATX headings (outside fenced code) and the atomic blocks
(fenced code, Markdown tables) that no boundary may cut, all with exact offsets into ``text``.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

Path = tuple[tuple[int, str], ...]  # a heading path: (level, title) from the top
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_TABLE_RULE = re.compile(  # possessive: the runs of spaces around "|" never split two ways
    r"^\s*+\|?+\s*+:?+-{3,}+:?+\s*+(?:\|\s*+:?+-{3,}+:?+\s*+)*+\|?+\s*+$"
)


@dataclass(frozen=True)
class Heading:
    """A Markdown ATX heading: its line's span, level and title."""
    start: int  # offset of the heading line
    end: int  # offset just after the heading line (its newline included)
    level: int
    title: str


@dataclass(frozen=True)
class Block:
    """An atomic block (a fenced code block or a table) a cut must not split unless it is over
    the model's limit."""
    start: int
    end: int
    kind: str  # "code" | "table"


@dataclass(frozen=True)
class _Spans:
    """The starts and ends of a structure's headings and blocks, for binary searches (built
    on first use: ``analyze`` returns the structure complete, and nothing appends after)."""

    heading_starts: list[int]
    heading_ends: list[int]
    block_starts: list[int]
    block_ends: list[int]


@dataclass
class Structure:
    """The headings and atomic blocks of one text, in order."""
    headings: list[Heading] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)

    _open: tuple[list[int], list[Path]] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    _index: _Spans | None = field(default=None, init=False, repr=False, compare=False)

    def open_at(self, pos: int) -> Path:
        """The heading path open at ``pos``, every level: ``(level, title)`` of the last
        heading starting before ``pos`` and of each heading above it, from the top (a binary
        search over the headings' paths, built on the first call: ``analyze`` returns the
        headings complete, and nothing appends to them after)."""
        if self._open is None:
            self._open = ([h.start for h in self.headings], heading_paths(self.headings))
        starts, paths = self._open
        index = bisect.bisect_left(starts, pos)
        return paths[index - 1] if index else ()

    def _spans(self) -> _Spans:
        if self._index is None:
            self._index = _Spans(
                [h.start for h in self.headings],
                [h.end for h in self.headings],
                [b.start for b in self.blocks],
                [b.end for b in self.blocks],
            )
        return self._index

    def headings_in(self, start: int, end: int) -> list[Heading]:
        """The headings overlapping ``[start, end)``, in order (a binary search: headings are
        lines in document order, so their starts and ends both ascend)."""
        index = self._spans()
        lo = bisect.bisect_right(index.heading_ends, start)
        return self.headings[lo : max(lo, bisect.bisect_left(index.heading_starts, end))]

    def headings_starting_in(self, start: int, end: int) -> list[Heading]:
        """The headings whose line starts in ``[start, end)``, in order."""
        starts = self._spans().heading_starts
        return self.headings[bisect.bisect_left(starts, start) : bisect.bisect_left(starts, end)]

    def blocks_in(self, start: int, end: int) -> list[Block]:
        """The atomic blocks overlapping ``[start, end)``, in order (blocks never overlap
        each other, so their starts and ends both ascend)."""
        index = self._spans()
        lo = bisect.bisect_right(index.block_ends, start)
        return self.blocks[lo : max(lo, bisect.bisect_left(index.block_starts, end))]

    def block_holding(self, start: int, end: int, slack: int = 0) -> Block | None:
        """The first block with ``block.start <= start`` and ``end <= block.end + slack``
        (the span ``[start, end)`` lies in it), else None; a binary search."""
        index = self._spans()
        first = bisect.bisect_left(index.block_ends, end - slack)  # ends reaching ``end``
        starts_before = bisect.bisect_right(index.block_starts, start)
        return self.blocks[first] if first < starts_before else None


def heading_paths(headings: Sequence[Heading]) -> list[Path]:
    """Per heading, in order, its path: itself and the nearest heading above it of each higher
    level, from the top."""
    paths: list[Path] = []
    stack: Path = ()
    for heading in headings:
        kept = tuple(entry for entry in stack if entry[0] < heading.level)
        stack = (*kept, (heading.level, heading.title))
        paths.append(stack)
    return paths


def _lines(text: str) -> list[tuple[int, int, str]]:
    """(start, end_with_newline, line_without_newline) for every line."""
    out: list[tuple[int, int, str]] = []
    pos = 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        out.append((pos, pos + len(line), body))
        pos += len(line)
    return out


def analyze(text: str) -> Structure:
    """The ``Structure`` of Markdown ``text``: ATX headings outside code fences, fenced code
    blocks and tables."""
    structure = Structure()
    lines = _lines(text)
    i = 0
    while i < len(lines):
        start, end, body = lines[i]
        fence = _FENCE.match(body)
        if fence:
            marker = fence.group(1)
            j = i + 1
            while j < len(lines) and not lines[j][2].lstrip().startswith(marker):
                j += 1
            last = min(j, len(lines) - 1)
            structure.blocks.append(Block(start, lines[last][1], "code"))
            i = last + 1
            continue
        if _is_table_start(lines, i):
            j = i + 1
            while j < len(lines) and "|" in lines[j][2] and lines[j][2].strip():
                j += 1
            structure.blocks.append(Block(start, lines[j - 1][1], "table"))
            i = j
            continue
        heading = _HEADING.match(body)
        if heading and heading.group(2):
            structure.headings.append(Heading(start, end, len(heading.group(1)), heading.group(2)))
        i += 1
    return structure


def is_table_rule(line: str) -> bool:
    """A Markdown table's rule line (``|---|:--:|``)."""
    return bool(_TABLE_RULE.match(line)) and "-" in line


def _is_table_start(lines: list[tuple[int, int, str]], i: int) -> bool:
    body = lines[i][2]
    if "|" not in body:
        return False
    if i + 1 < len(lines) and is_table_rule(lines[i + 1][2]):
        return True
    # a run of pipe rows without a rule line (e.g. converted from other formats)
    return (
        bool(_TABLE_ROW.match(body))
        and i + 1 < len(lines)
        and bool(_TABLE_ROW.match(lines[i + 1][2]))
    )
