"""Paragraph strategy for text without headings (docs/rules.md): blank-line
paragraphs; a paragraph under ``min_chars`` (50) merges with the next; one over ``max_chars``
(1500) is split by sentences (Russian-aware: «т. е.», «г.», «ст.» end no sentence), and only
here consecutive pieces overlap, by whole sentences up to ``overlap_chars`` (15 %).

A piece whose embedded text is still over the model's limit is cut further by the shared unit
machinery (``units.UnitSplitter``), so nothing is truncated by the model.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ragingest.chunk import Chunk
from ragingest.splitters.sentences import sentence_starts
from ragingest.splitters.structure import Structure, analyze
from ragingest.splitters.units import Unit, UnitSplitter, trim

MIN_CHARS = 50
MAX_CHARS = 1500
OVERLAP_CHARS = 225

_PARAGRAPH = re.compile(r"\S(?:[^\n]|\n(?![ \t]*\n))*")
_WORD = re.compile(r"\s+(?=\S)")


def paragraph_spans(text: str) -> list[tuple[int, int]]:
    """The spans of the blank-line separated paragraphs of ``text``, trimmed."""
    return [trim(text, m.start(), m.end()) for m in _PARAGRAPH.finditer(text)]


def merge_short(spans: list[tuple[int, int]], min_chars: int) -> list[tuple[int, int]]:
    """A paragraph under ``min_chars`` joins the next one (the last one joins the previous)."""
    out: list[tuple[int, int]] = []
    pending: tuple[int, int] | None = None
    for start, end in spans:
        if pending is not None:
            start = pending[0]
            pending = None
        if end - start < min_chars:
            pending = (start, end)
            continue
        out.append((start, end))
    if pending is not None:
        if out:
            out[-1] = (out[-1][0], pending[1])
        else:
            out.append(pending)
    return out


def sentence_pieces(
    text: str, start: int, end: int, max_chars: int, overlap_chars: int
) -> list[tuple[int, int]]:
    """``[start, end)`` cut at sentence starts into pieces of at most ``max_chars`` (a longer
    sentence is cut at words), consecutive pieces sharing whole sentences up to
    ``overlap_chars``."""
    if end - start <= max_chars:
        return [(start, end)]
    starts = [start, *sentence_starts(text, start, end)]
    units: list[tuple[int, int]] = []
    for a, b in zip(starts, [*starts[1:], end], strict=True):
        a, b = trim(text, a, b)
        if b - a <= max_chars:
            units.append((a, b))
            continue
        words = [a, *(m.end() for m in _WORD.finditer(text, a, b))]
        piece = a
        for w in words[1:]:
            if w - piece > max_chars:
                units.append(trim(text, piece, w))
                piece = w
        units.append(trim(text, piece, b))
    pieces: list[tuple[int, int]] = []
    i = 0
    while i < len(units):
        j = i
        while j + 1 < len(units) and units[j + 1][1] - units[i][0] <= max_chars:
            j += 1
        pieces.append((units[i][0], units[j][1]))
        if j + 1 >= len(units):
            break
        k = j + 1  # next piece: back up over whole sentences that fit in the overlap
        while k - 1 > i and units[j][1] - units[k - 1][0] <= overlap_chars:
            k -= 1
        i = k
    return pieces


class ParagraphSplitter(UnitSplitter):
    """Text without headings, cut at paragraphs: short ones merged, long ones cut between
    sentences."""
    strategy = "paragraph"

    def __init__(
        self,
        base: object,
        min_chars: int = MIN_CHARS,
        max_chars: int = MAX_CHARS,
        overlap_chars: int = OVERLAP_CHARS,
    ) -> None:
        super().__init__(base)
        self.min_chars, self.max_chars, self.overlap_chars = min_chars, max_chars, overlap_chars

    def units(self, text: str, structure: Structure) -> list[Unit]:
        """Paragraph units: short paragraphs merged up to ``min_chars``, long ones cut into
        sentence pieces of at most ``max_chars``."""
        return [
            Unit(s, e)
            for a, b in merge_short(paragraph_spans(text), self.min_chars)
            for s, e in sentence_pieces(text, a, b, self.max_chars, self.overlap_chars)
        ]

    def split_chunks(self, text: str, title: str = "") -> list[Chunk]:
        """One chunk per paragraph unit, cut further only where the model's limit requires;
        offsets exact."""
        structure = analyze(text)
        counter = self.measure.index(text)
        chunks: list[Chunk] = []
        for unit in self.units(text, structure):
            # each unit is one chunk unless the model's limit forces a cut
            size = counter.count(unit.start, unit.end)
            budget = max(size, self._budget(""))
            chunks.extend(self._cut(text, unit, title, counter, structure, budget, 0))
        sizes = self.measure.exact([c.text for c in chunks])
        return [replace(c, token_count=n) for c, n in zip(chunks, sizes, strict=True)]
