"""Span counters: how many units (tokens, words, characters) a span of one indexed text holds.

``SpanCounter`` is the contract the splitters pack with; ``Measure.index`` (``splitters.measure``)
builds one per document: ``CharCounter`` for characters, ``StartsCounter`` over word starts,
``TokenStartsCounter`` over the tokenizer's token starts, which also gives exact standalone counts
of word-aligned spans (``exact``) so final sizes need no second tokenization.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Sequence
from typing import Protocol

# whitespace a word-local tokenizer may turn into its word separator (checked per tokenizer)
SPACE_CANDIDATES = " \n\t\r\f"
# Rare spaces the tokenizer may treat unlike a space: a span with one near an edge is tokenized.
_RARE_SPACE = re.compile("[\x85\u1680\u2000-\u200a\u2028\u2029\u202f\u205f]")


class SpanCounter(Protocol):
    """How many units (tokens, words, characters) a span of one indexed text holds."""

    def count(self, start: int, end: int) -> int: ...

    def boundaries(self, start: int, end: int) -> list[int]:
        """Start offsets of the units (tokens/words/chars) inside ``[start, end)``."""
        ...


class CharCounter:
    """Counts characters."""

    def count(self, start: int, end: int) -> int:
        return max(0, end - start)

    def boundaries(self, start: int, end: int) -> list[int]:
        return list(range(start, end))


class StartsCounter:
    """Counts units whose start offset falls inside the span."""

    def __init__(self, starts: Sequence[int]) -> None:
        self.starts = starts

    def count(self, start: int, end: int) -> int:
        """The number of unit starts inside ``[start, end)``."""
        return bisect.bisect_left(self.starts, end) - bisect.bisect_left(self.starts, start)

    def boundaries(self, start: int, end: int) -> list[int]:
        """The unit starts inside ``[start, end)``, sorted and distinct."""
        lo = bisect.bisect_left(self.starts, start)
        hi = bisect.bisect_left(self.starts, end)
        return sorted(set(self.starts[lo:hi]))


class TokenStartsCounter(StartsCounter):
    """A document's token starts (``count``, as ``StartsCounter``) and exact standalone counts.

    ``exact(start, end)`` is ``len(tokenize(text[start:end]))`` for a span that starts after a
    run of separator whitespace (or at the text start) and ends before one (or at the text
    end), when the tokenizer is word-local (checked by ``Measure``): each word is tokenized on its
    own, and a word's leading marker token maps to the whitespace before it. Then the span's
    tokens are the document's tokens that start in ``[start of that run, end)``, less the
    stray marker tokens that a block's trailing whitespace produced. ``None`` otherwise.
    """

    def __init__(
        self,
        text: str,
        starts: Sequence[int],
        word_starts: Sequence[int] | None,
        block_starts: list[int],
        specials: Sequence[str] = (),
    ) -> None:
        super().__init__(starts)
        self.text = text
        self.word_starts = word_starts  # None: the tokenizer is not word-local
        # both edges of every added token (``<unk>``: matched before normalization, so the
        # whitespace next to one is a token of its own) and every ``_RARE_SPACE``
        self.specials = sorted(
            [*_occurrences(text, specials), *(m.start() for m in _RARE_SPACE.finditer(text))]
        )
        self.reach = max(map(len, specials), default=0) + 1
        # where the document was tokenized in separate blocks and that could differ from one
        # pass: a cut not between whitespace and a word, or next to an added token
        self.cuts = [
            b
            for b in block_starts
            if not text[b - 1].isspace()
            or text[b].isspace()
            or _any_in(self.specials, b - self.reach, b + self.reach)
        ]

    def exact(self, start: int, end: int) -> int | None:
        """The exact token count of ``text[start:end]`` where the word-aligned index gives it,
        ``None`` where the span must be tokenized on its own."""
        text, words = self.text, self.word_starts
        if words is None or not start < end <= len(text) or start < 0:
            return None
        if end < len(text) and text[end] not in SPACE_CANDIDATES:
            return None
        if text[start].isspace() or text[end - 1].isspace() or unicodedata.combining(text[start]):
            return None
        run = start
        while run > 0 and text[run - 1].isspace():
            if text[run - 1] not in SPACE_CANDIDATES:
                return None
            run -= 1
        if run == start and start > 0:
            return None  # starts inside a word
        if _any_in(self.cuts, start + 1, end - 1):
            return None
        reach = self.reach
        if _any_in(self.specials, run - reach, start + reach) or _any_in(
            self.specials, end - reach, end + reach
        ):
            return None
        return bisect.bisect_left(words, end) - bisect.bisect_left(words, run)


def span_exact(counter: SpanCounter, start: int, end: int) -> int | None:
    """``counter.exact`` for a ``TokenStartsCounter``, else None (not provable)."""
    return counter.exact(start, end) if isinstance(counter, TokenStartsCounter) else None


def _any_in(positions: list[int], lo: int, hi: int) -> bool:
    """Whether sorted ``positions`` hold a value in ``[lo, hi]``."""
    i = bisect.bisect_left(positions, lo)
    return i < len(positions) and positions[i] <= hi


def _occurrences(text: str, needles: Sequence[str]) -> list[int]:
    """Start and end offsets of every occurrence of each needle in ``text``."""
    found: list[int] = []
    for needle in needles:
        pos = text.find(needle)
        while pos != -1:
            found += [pos, pos + len(needle)]
            pos = text.find(needle, pos + 1)
    return found
