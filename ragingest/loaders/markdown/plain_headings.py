"""Headings of plain text (``.txt``), found by patterns so heading-first can use them: numbered
lines («1.», «1.2», «1.2.3»), «Часть/Раздел/Глава/Статья N», ALL-CAPS lines and lines underlined
with ``===``/``---``, each standing alone (a blank line or the start of the text before it, no
sentence end after it). They are rewritten as ``#`` headings, ranked by kind (underlined ``===``
> Часть > Раздел > Глава > capitals > underlined ``---`` > Статья > numbering depth); a heading
on the first line whose kind occurs nowhere else is the title (H1). A text with none is marked
for the paragraph strategy.
"""

from __future__ import annotations

import re

from ragingest.loaders.markdown.source_map import Edit, apply_edits

_RANKS = (
    "setext1",
    "part",
    "section",
    "chapter",
    "caps",
    "setext2",
    "article",
    "num1",
    "num2",
    "num3",
    "num4",
)
_KEYWORDS = {
    "часть": "part",
    "part": "part",
    "раздел": "section",
    "section": "section",
    "глава": "chapter",
    "chapter": "chapter",
    "статья": "article",
    "article": "article",
}
_KEYWORD = re.compile(
    r"^(часть|раздел|глава|статья|part|section|chapter|article)\s+"
    r"(?:\d+(?:\.\d+)*|[IVXLC]+)\b\.?(?:\s*[.:—–-]?\s*\S.*)?$",
    re.IGNORECASE,
)
_NUMBERED = re.compile(r"^(\d{1,3}(?:\.\d{1,3}){0,3})(\.?)\s+([A-ZА-ЯЁ«\"].{0,150})$")
_UNDERLINE = re.compile(r"^(=+|-+)\s*$")
_SENTENCE_END = re.compile(r"[.;,:!?]$")
_ATX = re.compile(r"^ {0,3}#{1,6}\s+\S", re.MULTILINE)
_MAX_HEADING = 120


def _caps(line: str) -> bool:
    letters = [ch for ch in line if ch.isalpha()]
    return len(letters) >= 3 and all(ch.isupper() for ch in letters) and len(line) <= 100


def _kind(lines: list[str], i: int) -> str | None:
    """The heading kind of line ``i``, or ``None``."""
    line = lines[i].strip()
    if not line or len(line) > _MAX_HEADING or line.startswith(("#", "|", "-", "*", ">")):
        return None
    below = lines[i + 1].strip() if i + 1 < len(lines) else ""
    above = lines[i - 1].strip() if i > 0 else ""
    underline = _UNDERLINE.match(below)
    if underline and len(below) >= 3 and not _UNDERLINE.match(line):
        return "setext1" if below.startswith("=") else "setext2"
    if above:
        return None  # a heading stands alone
    keyword = _KEYWORD.match(line)
    if keyword:
        return _KEYWORDS[keyword.group(1).lower()]
    numbered = _NUMBERED.match(line)
    if numbered and not _SENTENCE_END.search(line):
        following = lines[i + 1].strip() if i + 1 < len(lines) else ""
        depth = numbered.group(1).count(".") + 1
        if following and _NUMBERED.match(following) and depth == 1 and numbered.group(2):
            return None  # «1. …» directly followed by «2. …»: a numbered list
        return f"num{min(depth, 4)}"
    if _caps(line) and not _SENTENCE_END.search(line):
        return "caps"
    return None


def text_headings(text: str) -> tuple[str, bool]:
    """Plain text with its detected headings rewritten as Markdown ``#`` lines, and whether
    any were found."""
    edits, found = heading_edits(text)
    return apply_edits(text, edits)[0] if edits else text, found


def heading_edits(text: str) -> tuple[list[Edit], bool]:
    """``text_headings`` as edits of ``text`` (``source_map.apply_edits``): a heading line's
    outer whitespace out, its ``#`` prefix inserted before its first character, a setext
    underline (with the line end before it) out."""
    if _ATX.search(text):
        return [], True
    lines = text.split("\n")
    kinds = {i: k for i in range(len(lines)) if (k := _kind(lines, i))}
    if not kinds:
        return [], False
    first_line = next((i for i, line in enumerate(lines) if line.strip()), 0)
    first_kind = kinds.get(first_line)
    title_at = None
    if first_kind and len(kinds) > 1 and list(kinds.values()).count(first_kind) == 1:
        title_at = first_line  # a heading of its own kind on the first line: the title
    used = sorted({k for i, k in kinds.items() if i != title_at}, key=_RANKS.index)
    levels = {kind: min(6, 2 + rank) for rank, kind in enumerate(used)}
    edits: list[Edit] = []
    skip = False
    at = 0  # offset of line i
    for i, line in enumerate(lines):
        start, at = at, at + len(line) + 1
        if skip:
            skip = False
            continue
        kind = kinds.get(i)
        if kind is None:
            continue
        level = 1 if i == title_at else levels[kind]
        lead = start + len(line) - len(line.lstrip())
        trail = start + len(line.rstrip())
        edits += [
            (start, lead, ""),
            (lead, lead, "#" * level + " "),
            (trail, start + len(line), ""),
        ]
        if kind.startswith("setext") and i + 1 < len(lines):
            edits.append((start + len(line), at + len(lines[i + 1]), ""))  # drop the underline
            skip = True
    return edits, True
