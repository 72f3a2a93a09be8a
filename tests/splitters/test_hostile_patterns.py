"""The split stage's patterns stay linear on hostile lines: a regex call is one C call that
``--file-timeout``'s deadline cannot stop between two steps, so each must end in time on its own.

A bounded-time check of the pattern, not a timed test of the product: each input is sized so
that the backtracking form of the pattern runs for minutes (quadratic or worse) while a linear
one needs milliseconds, and the call is stopped by a timer (Python's regex engine checks for
signals as it goes) far below the first and far above the second."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from ragingest.splitters.dialects import words
from ragingest.splitters.packing import _fine_candidates, candidates
from ragingest.splitters.sentences import sentence_starts
from ragingest.splitters.structure import analyze, is_table_rule
from ragingest.splitters.word_tokens import _plan

BOUND_S = 5.0  # linear: ~10 ms here; the backtracking forms: minutes


class _Stopped(Exception):
    pass


@contextmanager
def _within(seconds: float) -> Iterator[None]:
    def stop(signum: int, frame: object) -> None:
        raise _Stopped(f"still running after {seconds} s: the pattern backtracks")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class _NoUnits:
    """A span counter with no unit boundaries (``_fine_candidates`` reads only these)."""

    def boundaries(self, start: int, end: int) -> list[int]:
        return []


def _cuts(text: str) -> object:
    return candidates(text, 0, len(text), analyze(text))


def _word_cuts(text: str) -> object:
    return _fine_candidates(text, 0, len(text), _NoUnits(), analyze(text))


HOSTILE: dict[str, tuple[Callable[[str], object], str]] = {
    # a block ending in a run of whitespace (``\s*\S+`` from every start in the run)
    "trailing_spaces": (lambda s: _plan(0, s), "# T\n\nSome words" + " " * 250_000),
    "trailing_newlines": (lambda s: _plan(0, s), "a b c" + " \n" * 100_000),
    # every "[" of the line a link text running to the line's end
    "open_brackets": (words, "[" * 100_000 + " https://e.com"),
    # an admonition's optional title between two runs of spaces
    "admonition": (words, "!!! note" + " " * 100_000 + "!"),
    "admonition_words": (words, "!!! note" + " a" * 50_000 + " " * 50_000 + "!"),
    # an import clause and the spaces before "from" (cubic)
    "import": (words, "import " + " " * 20_000 + "x"),
    "import_words": (words, "import " + "a " * 20_000 + "x"),
    # a run of sentence marks with no space after it, and spaces after a sentence end
    "sentence_marks": (sentence_starts, "Some words " + "!" * 200_000),
    "sentence_spaces": (sentence_starts, "End." + " " * 100_000 + "x"),
    # a table rule's spaces on either side of an optional "|"
    "table_rule": (is_table_rule, " " * 100_000 + "x"),
    # a section's trailing blank lines and spaces, searched for a line or word after them
    "trailing_blank_lines": (_cuts, "Some words.\nMore words." + "\n" * 100_000),
    "trailing_word_spaces": (_word_cuts, "Some words" + " " * 100_000),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_hostile_line_is_read_in_linear_time(case):
    function, text = HOSTILE[case]
    with _within(BOUND_S):
        function(text)


def test_the_linear_patterns_keep_their_meaning():
    target = "https://play.example/#" + "A1b2" * 12
    # a link's text may hold one bracketed pair; its opaque target goes, its text stays (the
    # backtracking pattern missed this link and left "See [the [new] sandbox]( now")
    assert words(f"See [the [new] sandbox]({target}) now") == "See the [new] sandbox now"
    assert words('!!! note "Примечание"\n    Текст.') == "Примечание\n    Текст."
    assert words("!!! warning   \n    Текст.") == "Текст."
    assert words("??? tip Extra words\nТекст.") == "Текст."
    for line in (
        "import Tabs from '@theme/Tabs';",
        'import { ref, computed } from "vue"',
        "import * as X  from  'x'",
        "import 'side-effect'",
    ):
        assert words(f"{line}\nТекст.") == "Текст.", line
    assert words("import the data from the old system\nТекст.").startswith("import the data")


def test_trailing_whitespace_is_the_tail_of_the_block():
    block = "one two three" + " " * 7
    head, middle, starts, tail = _plan(10, block)
    assert head == ("one", 10, False, True)
    assert (middle, starts) == ([" two"], [13])
    assert tail == (" three" + " " * 7, 17, True, False)
