"""Russian-aware sentence boundaries (seed 003's paragraph fallback splits long text by sentences).

Contract: ``sentence_starts(text, start, end)`` returns the offsets inside ``(start, end)`` where
a new sentence begins. A sentence ends at ``.``, ``!``, ``?`` or ``…`` (with closing quotes or
brackets) followed by whitespace and a capital letter, digit, quote, dash or list marker, unless
the word before the dot is a known abbreviation («т. е.», «г.», «ст.», «и т. д.», «e.g.») or an
initial («А. С. Пушкин»).
"""

from __future__ import annotations

import re

_ABBREVIATION_WORDS = """
т е д п г гг ст стр рис см ср др пр им ул пер просп обл р руб коп тыс млн млрд кв м км кг
мин сек ч напр проч прим табл гл разд ед тел доп вкл искл изм англ рус акад проф доц зам нач
тов гр св сб вып изд т.е т.д т.п т.к с.г п.п e g i mr mrs ms dr prof inc ltd vs etc fig no
vol pp eq approx
"""
ABBREVIATIONS = frozenset(_ABBREVIATION_WORDS.split())


_END = re.compile(r"[.!?…]+[»\"')\]]*(?=\s+)")
_NEXT = re.compile(r"\s+([«\"'(\[–—-]?\s*[A-ZА-ЯЁ0-9•*])")
_WORD_BEFORE = re.compile(r"([\w.]+)$")


def sentence_starts(text: str, start: int = 0, end: int | None = None) -> list[int]:
    end = len(text) if end is None else end
    starts: list[int] = []
    for match in _END.finditer(text, start, end):
        follow = _NEXT.match(text, match.end(), end)
        if not follow:
            continue
        if match.group().startswith(".") and _is_abbreviation(text, start, match.start()):
            continue
        starts.append(follow.start(1))
    return starts


def _is_abbreviation(text: str, start: int, dot: int) -> bool:
    before = _WORD_BEFORE.search(text, max(start, dot - 20), dot)
    if not before:
        return False
    word = before.group(1).lower().strip(".")
    if word in ABBREVIATIONS or word.split(".")[-1] in ABBREVIATIONS:
        return True
    # a single capital letter is an initial: «А. С. Пушкин»
    return len(word) == 1 and before.group(1)[-1].isupper()
