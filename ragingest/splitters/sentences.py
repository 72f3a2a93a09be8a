"""Russian-aware sentence boundaries (the paragraph fallback cuts a long paragraph at them).

Contract: ``sentence_starts(text, start, end)`` returns the offsets inside ``(start, end)`` where
a new sentence begins. A sentence ends at ``.``, ``!``, ``?`` or ``…`` (with closing quotes or
brackets) followed by whitespace and a capital letter, digit, quote, dash or list marker, unless
the word before the dot is a known abbreviation («т. е.», «г.», «ст.», «и т. д.», «e.g.») or an
initial («А. С. Пушкин»).

Caseless text — a span whose sentence ends are followed by lower-case letters at least three
times as often as by capitals (lower-cased exports, transcripts, chats) — gets sentence starts
before lower-case letters too; there a single letter before the dot («u.s.», «e.g.») is an
abbreviation whatever its case.
"""

from __future__ import annotations

import re

_ABBREVIATION_WORDS = """
т е д п г гг ст стр рис см ср др пр им ул пер просп обл р руб коп тыс млн млрд кв м км кг
мин сек ч напр проч прим табл гл разд ед тел доп вкл искл изм англ рус акад проф доц зам нач
тов гр св сб вып изд т.е т.д т.п т.к с.г п.п e g i mr mrs ms dr prof inc ltd vs etc fig no
vol pp eq approx al corp co jr sr cf st mt
"""
ABBREVIATIONS = frozenset(_ABBREVIATION_WORDS.split())


# linear on hostile runs: a sentence end starts at the first mark of a run (a run of 200 000
# "!" not followed by a space was searched from each of its marks), and the quantifiers that
# meet are possessive
_END = re.compile(r"(?<![.!?…])[.!?…]++[»\"')\]]*+(?=\s)")
_NEXT = re.compile(r"\s++([«\"'(\[–—-]?+\s*+[A-ZА-ЯЁ0-9•*])")
_NEXT_CASELESS = re.compile(r"\s++([«\"'(\[–—-]?+\s*+[^\W_]|[•*$])")
_CASE = re.compile(r"[.!?…][»\"')\]]*\s+[«\"'(\[]?([^\W\d_])")
_WORD_BEFORE = re.compile(r"([\w.]+)$")


def is_caseless(text: str, start: int = 0, end: int | None = None) -> bool:
    """Sentence ends in ``text[start:end]`` are mostly followed by lower-case letters."""
    upper = lower = 0
    for match in _CASE.finditer(text, start, len(text) if end is None else end):
        if match.group(1).isupper():
            upper += 1
        else:
            lower += 1
    return lower >= 3 and lower >= 3 * upper


def sentence_starts(text: str, start: int = 0, end: int | None = None) -> list[int]:
    end = len(text) if end is None else end
    caseless = is_caseless(text, start, end)
    follows = _NEXT_CASELESS if caseless else _NEXT
    starts: list[int] = []
    for match in _END.finditer(text, start, end):
        follow = follows.match(text, match.end(), end)
        if not follow:
            continue
        if match.group().startswith(".") and _is_abbreviation(text, start, match.start(), caseless):
            continue
        starts.append(follow.start(1))
    return starts


def _is_abbreviation(text: str, start: int, dot: int, caseless: bool = False) -> bool:
    before = _WORD_BEFORE.search(text, max(start, dot - 20), dot)
    if not before:
        return False
    word = before.group(1).lower().strip(".")
    last = word.split(".")[-1]
    if word in ABBREVIATIONS or last in ABBREVIATIONS:
        return True
    # a single capital letter is an initial: «А. С. Пушкин»; in caseless text any single
    # letter is one («u.s.», «e.g.»)
    return len(last) == 1 and (caseless or before.group(1)[-1].isupper())
