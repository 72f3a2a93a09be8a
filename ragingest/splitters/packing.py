"""Cut one span of text into pieces of at most ``budget`` units, at the strongest boundaries.

Written by hand because ``RecursiveCharacterTextSplitter`` returns strings, not offsets, and
re-measures every candidate piece; here sizes come from one ``SpanCounter`` per document.

Contract: ``pack(text, start, end, budget, overlap, counter, structure)`` returns
``[(start, end), ...]`` covering every non-whitespace character of ``text[start:end]``, each
piece starting and ending on non-whitespace, in order. Without overlap, a span over
``budget`` is cut into about ``ceil(size / budget)`` pieces of similar size (each at most
``budget``). Boundaries are tried strongest first: blank line, line, sentence, word, then
unit (token/char); a line break inside a sentence of hard-wrapped prose counts as a word
boundary. With ``paragraphs_first`` (text without headings, whose paragraphs and lines are
its only structure), a piece ends at a line or paragraph break wherever one fits rather than
at a later sentence or word. A piece never cuts an atomic block (table, fenced code); a block
bigger than ``budget`` becomes a piece of its own. Consecutive pieces share about ``overlap``
units, taken at sentence or word starts; overlap is never taken from inside an atomic block,
nor across a heading line. No piece ends right after a heading line where the heading fits
with the text under it up to its first sentence end: a heading goes with its text.
"""

from __future__ import annotations

import bisect
import itertools
import math
import re

from ragingest.splitters.counters import SpanCounter
from ragingest.splitters.sentences import sentence_starts
from ragingest.splitters.structure import Structure

PARAGRAPH, LINE, SENTENCE, WORD, UNIT = 4, 3, 2, 1, 0
# a piece may end this early (share of the budget) to end on a sentence instead of a word
MIN_FILL = 0.25
# a span over budget is cut into as many pieces as the budget forces, each aimed at an equal
# share plus this slack, so that no small tail is left to merge into another section
BALANCE_SLACK = 0.2

_PARAGRAPH = re.compile(r"\n[ \t]*\n\s*(?=\S)")
_LINE = re.compile(r"\n[ \t]*(?=\S)")
_WORD = re.compile(r"\s+(?=\S)")
_NON_SPACE = re.compile(r"\S")


def candidates(text: str, start: int, end: int, structure: Structure) -> dict[int, int]:
    """Unit-start offsets in ``(start, end)`` mapped to boundary strength (no word level)."""
    cuts: dict[int, int] = {}
    stop = _trim_end(text, start, end)  # a trailing run of whitespace: see ``_fine_candidates``
    for pattern, strength in ((_LINE, LINE), (_PARAGRAPH, PARAGRAPH)):
        for m in pattern.finditer(text, start, stop):
            cuts[m.end()] = WORD if strength == LINE and _soft_wrap(text, m) else strength
    for pos in sentence_starts(text, start, end):
        cuts.setdefault(pos, SENTENCE)
    for block in structure.blocks_in(start, end):
        for pos in [p for p in cuts if block.start < p < block.end]:
            del cuts[pos]
        for edge in (block.start, block.end):
            first = _NON_SPACE.search(text, edge, end)
            if first and start < first.start() < end:
                cuts[first.start()] = PARAGRAPH
    inside = sorted(cuts)
    for heading in structure.headings_in(start, end):  # cut only where nothing else fits
        lo = bisect.bisect_right(inside, heading.start)
        for pos in inside[lo : bisect.bisect_left(inside, heading.end, lo)]:
            del cuts[pos]
    return {p: s for p, s in cuts.items() if start < p < end}


def _after_headings(
    text: str,
    start: int,
    end: int,
    structure: Structure,
    counter: SpanCounter,
    budget: int,
    cuts: dict[int, int],
) -> set[int]:
    """The cuts that would leave a heading line at the end of a piece: the first
    non-whitespace offset after each heading in ``[start, end)``, where the heading fits the
    budget with the text under it up to its first sentence end (else a bare heading is better
    than a cut sentence) and no table or code block too big for that starts there."""
    after: dict[int, int] = {}  # cut -> start of its heading
    for heading in structure.headings_starting_in(start, end):
        following = _NON_SPACE.search(text, heading.end, end)
        if following:
            after[following.start()] = heading.start
    body_ends = sorted(p for p, s in cuts.items() if s >= SENTENCE and p not in after)
    positions = sorted(cuts)
    glued: set[int] = set()
    for at, heading_start in after.items():
        block = structure.block_holding(at, at + 1)
        if block:  # measured to the next cut, as the stretch it makes is measured
            first = bisect.bisect_left(positions, block.end)
            until = positions[first] if first < len(positions) else end
        else:
            first = bisect.bisect_right(body_ends, at)
            until = body_ends[first] if first < len(body_ends) else end
        if counter.count(heading_start, min(until, end)) <= budget:
            glued.add(at)
    return glued


def _soft_wrap(text: str, line_break: re.Match[str]) -> bool:
    """A line break inside a sentence (hard-wrapped prose: the line ends on a letter, digit or
    comma, the next starts lower case) is only a word boundary."""
    line = text[max(0, line_break.start() - 64) : line_break.start()].rstrip(" \t")
    before = line[-1] if line else "\n"
    after = text[line_break.end()]
    return (before.isalnum() or before == ",") and after.islower()


def _fine_candidates(
    text: str, start: int, end: int, counter: SpanCounter, structure: Structure
) -> dict[int, int]:
    """Word starts, then unit starts, for a stretch with no coarser boundary that fits; none
    inside an atomic block."""
    # searched up to the last non-space only: each start in a trailing run of whitespace
    # would scan the rest of it for the word that never comes (quadratic, one C call)
    words = _WORD.finditer(text, start, _trim_end(text, start, end))
    cuts = {m.end(): WORD for m in words if m.end() < end}
    for pos in counter.boundaries(start + 1, end):
        cuts.setdefault(pos, UNIT)
    blocks = structure.blocks_in(start, end)
    return {p: s for p, s in cuts.items() if not any(b.start < p < b.end for b in blocks)}


def pack(
    text: str,
    start: int,
    end: int,
    budget: int,
    overlap: int,
    counter: SpanCounter,
    structure: Structure,
    paragraphs_first: bool = False,
) -> list[tuple[int, int]]:
    first = _NON_SPACE.search(text, start, end)
    if not first:
        return []
    start = first.start()
    end = start + len(text[start:end].rstrip())
    if counter.count(start, end) <= budget:
        return [(start, end)]
    barriers = [h.start for h in structure.headings if start < h.start < end]
    # a heading line goes with what follows it: no piece ends right after one
    cuts = candidates(text, start, end, structure)
    glued = _after_headings(text, start, end, structure, counter, budget, cuts)
    cuts = {p: s for p, s in cuts.items() if p not in glued}
    positions = sorted(cuts)
    # Refine stretches between coarse cuts that are still over budget.
    edges = [start, *positions, end]
    for a, b in itertools.pairwise(edges):
        if counter.count(a, b) > budget:
            fine = _fine_candidates(text, a, b, counter, structure)
            cuts.update((p, s) for p, s in fine.items() if p not in glued)
    ranked = _Cuts(cuts, counter, start)
    if overlap == 0:  # aim each piece at an equal share (overlapping pieces are not equal)
        total = counter.count(start, end)
        budget = min(budget, math.ceil(total / math.ceil(total / budget) * (1 + BALANCE_SLACK)))
    return _greedy(text, start, end, budget, overlap, counter, ranked, barriers, paragraphs_first)


class _Cuts:
    """The candidate cuts in order, with their strengths and ``rank = count(origin, p)``.

    Counts add up over adjacent spans (``count(a, c) == count(a, b) + count(b, c)``), so the
    size of ``[a, p)`` is ``rank[p] - rank(a)`` and, ranks being sorted, the cuts that fit a
    budget are found by bisection instead of one ``count`` per candidate.
    """

    def __init__(self, cuts: dict[int, int], counter: SpanCounter, origin: int) -> None:
        self.positions = sorted(cuts)
        self.strengths = [cuts[p] for p in self.positions]
        self.counter = counter
        self.origin = origin
        self.ranks = [counter.count(origin, p) for p in self.positions]

    def rank(self, pos: int) -> int:
        return self.counter.count(self.origin, pos)


def _greedy(
    text: str,
    start: int,
    end: int,
    budget: int,
    overlap: int,
    counter: SpanCounter,
    cuts: _Cuts,
    barriers: list[int],
    paragraphs_first: bool,
) -> list[tuple[int, int]]:
    pieces: list[tuple[int, int]] = []
    piece_start = start
    while True:
        first = _NON_SPACE.search(text, piece_start, end)
        if not first:
            return pieces
        piece_start = first.start()
        if counter.count(piece_start, end) <= budget:
            pieces.append((piece_start, _trim_end(text, piece_start, end)))
            return pieces
        cut = _best_cut(piece_start, end, budget, cuts, paragraphs_first)
        pieces.append((piece_start, _trim_end(text, piece_start, cut)))
        floor = max([piece_start, *(b for b in barriers if b < cut)])
        next_start = _overlap_start(floor, cut, overlap, cuts)
        if next_start < cut and _best_cut(next_start, end, budget, cuts, paragraphs_first) <= cut:
            next_start = cut  # overlap would leave no room to move forward
        piece_start = next_start


def _best_cut(
    piece_start: int, end: int, budget: int, cuts: _Cuts, paragraphs_first: bool = False
) -> int:
    """The strongest boundary among those that keep the piece within budget, preferring the
    later half of the piece; when the later half offers only word/unit cuts, the strongest
    from a quarter of the budget on (a shorter piece rather than a cut sentence); with
    ``paragraphs_first``, a line or paragraph break anywhere in the piece beats a later
    sentence; the first boundary after ``piece_start`` if none fits."""
    positions, ranks = cuts.positions, cuts.ranks
    lo = bisect.bisect_right(positions, piece_start)
    base = cuts.rank(piece_start)
    hi = bisect.bisect_right(ranks, base + budget, lo)  # positions[lo:hi] fit
    if hi == lo:
        return positions[lo] if lo < len(positions) else end
    late = bisect.bisect_left(ranks, base + budget / 2, lo, hi)  # positions[late:hi]: ≥ half
    if late == hi:
        late = lo
    window = cuts.strengths[late:hi]
    strongest = max(window)
    if paragraphs_first and strongest < LINE and max(cuts.strengths[lo:hi]) >= LINE:
        window = cuts.strengths[lo:hi]
        strongest = max(window)
    if strongest < SENTENCE:
        early = bisect.bisect_left(ranks, base + budget * MIN_FILL, lo, late)
        wider = cuts.strengths[early:hi]
        if max(wider) >= SENTENCE:
            window, strongest = wider, max(wider)
    return positions[hi - 1 - window[::-1].index(strongest)]


def _overlap_start(piece_start: int, cut: int, overlap: int, cuts: _Cuts) -> int:
    """Earliest sentence-or-stronger start (else word start) after ``piece_start`` whose tail
    up to ``cut`` fits in ``overlap``; ``cut`` itself when nothing fits."""
    if overlap <= 0:
        return cut
    positions, strengths = cuts.positions, cuts.strengths
    lo = bisect.bisect_right(positions, piece_start)
    hi = bisect.bisect_left(positions, cut)
    # count(p, cut) <= overlap  <=>  rank[p] >= rank(cut) - overlap
    lo = bisect.bisect_left(cuts.ranks, cuts.rank(cut) - overlap, lo, hi)
    for minimum in (SENTENCE, WORD):
        good = next((i for i in range(lo, hi) if strengths[i] >= minimum), None)
        if good is not None:
            return positions[good]
    return cut


def _trim_end(text: str, start: int, end: int) -> int:
    return start + len(text[start:end].rstrip())
