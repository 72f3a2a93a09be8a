"""FAQ: one chunk per question–answer pair, whatever its length; a long answer is
split and every piece's embedded text starts with the question.

Pairs are found as Markdown headings that are questions (the heading level with the most
titles ending in «?»; with none, the most common level below H1), or as marker lines
(«Вопрос:»/«В:»/«Q:» … «Ответ:»/«О:»/«A:»). Text before the first pair is a chunk of its own
unless it is only headings (the title is in every chunk's metadata anyway).
"""

from __future__ import annotations

import re
from collections import Counter

from ragingest.splitters.structure import Structure
from ragingest.splitters.units import Unit, UnitSplitter, trim

QUESTION_MARKER = re.compile(r"^[ \t]*(?:вопрос|в|q|question)[ \t]*[:.)][ \t]*(\S.*)$", re.I | re.M)
ANSWER_MARKER = re.compile(r"^[ \t]*(?:ответ|о|a|answer)[ \t]*[:.)]", re.I | re.M)


def question_level(structure: Structure) -> int | None:
    """The heading level the questions are at: the most common level (H2 or deeper) of headings
    ending in '?', else the most common level; ``None`` without such headings."""
    levels = [h for h in structure.headings if h.level >= 2]
    if not levels:
        return None
    asked = Counter(h.level for h in levels if h.title.rstrip().endswith("?"))
    if asked:
        return asked.most_common(1)[0][0]
    return Counter(h.level for h in levels).most_common(1)[0][0]


def looks_like_faq(text: str, structure: Structure) -> bool:
    """At least two question headings making up most of the H2/H3 headings, or at least two
    question/answer marker pairs."""
    sections = [h for h in structure.headings if h.level in (2, 3)]
    asked = [h for h in sections if h.title.rstrip().endswith("?")]
    if len(asked) >= 2 and len(asked) >= 0.6 * len(sections):
        return True
    return len(QUESTION_MARKER.findall(text)) >= 2 and len(ANSWER_MARKER.findall(text)) >= 2


class FaqSplitter(UnitSplitter):
    """FAQ documents: one unit per question with its answer; the question leads every piece."""
    strategy = "faq"

    def units(self, text: str, structure: Structure) -> list[Unit]:
        """One unit per question heading, or per question/answer marker pair when the questions
        are not headings."""
        level = question_level(structure)
        if level is not None:
            return self._heading_units(text, structure, level)
        return self._marker_units(text)

    def _heading_units(self, text: str, structure: Structure, level: int) -> list[Unit]:
        units: list[Unit] = []
        stack: list[tuple[int, str]] = []
        questions = [h for h in structure.headings if h.level == level]
        first = questions[0].start if questions else len(text)
        self._preamble(text, 0, first, structure, units)
        for i, heading in enumerate(structure.headings):
            stack = [entry for entry in stack if entry[0] < heading.level]
            stack.append((heading.level, heading.title))
            if heading.level != level:
                continue
            end = next(
                (h.start for h in structure.headings[i + 1 :] if h.level <= level), len(text)
            )
            start, end = trim(text, heading.start, end)
            headings = tuple(entry for entry in stack if entry[0] > 1)
            units.append(Unit(start, end, headings, heading.title.strip()))
        return units

    def _marker_units(self, text: str) -> list[Unit]:
        matches = list(QUESTION_MARKER.finditer(text))
        units: list[Unit] = []
        if not matches:
            start, end = trim(text, 0, len(text))
            return [Unit(start, end)] if end > start else []
        self._preamble(text, 0, matches[0].start(), None, units)
        for match, following in zip(matches, [*matches[1:], None], strict=True):
            end = following.start() if following else len(text)
            start, end = trim(text, match.start(), end)
            question = match.group(1).strip()
            units.append(Unit(start, end, ((2, question),), question))
        return units

    @staticmethod
    def _preamble(
        text: str, start: int, end: int, structure: Structure | None, units: list[Unit]
    ) -> None:
        start, end = trim(text, start, end)
        if end <= start:
            return
        body = text[start:end]
        if structure is not None:
            lines = [line for line in body.split("\n") if line.strip()]
            if all(line.lstrip().startswith("#") for line in lines):
                return
        units.append(Unit(start, end))
