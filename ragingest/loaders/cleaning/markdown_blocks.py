"""The blocks of a normalized Markdown text, as cross-document cleaning sees them.

Contract: ``markdown_blocks(text)`` returns the text's blocks in order, each a ``MdBlock``
``(start, end, kind)`` with ``text[start:end]`` its characters (no surrounding blank lines):
a fenced code block (```` ``` ```` or ``~~~``, blank lines inside included, unclosed: to the
end) is one ``code`` block; any other run of non-blank lines is one block whose kind is
``paragraph`` only when no line of it is Markdown structure (a heading, a fence, a table row,
a list item, a quote, indented code, a setext underline, HTML), ``heading`` when its first line
is an ATX heading, else ``structure``: removing a whole ``paragraph`` block and the blank
lines after it leaves every other block as it was. Written by hand: the
Markdown parsers at hand (markdown-it via unstructured) give no source offsets per block.
"""

from __future__ import annotations

import re
from typing import NamedTuple

PARAGRAPH, HEADING, STRUCTURE, CODE = "paragraph", "heading", "structure", "code"

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r" {0,3}#{1,6}(?:\s|$)")  # matched at a block's start
_STRUCTURE_LINE = re.compile(
    r"^(?: {4}|\t| {0,3}(?:#{1,6}(?:\s|$)|[|>]|[-*+](?:\s|$)|\d{1,9}[.)](?:\s|$)|[=-]+\s*$|<))"
)


class MdBlock(NamedTuple):
    """One block of a Markdown text: ``text[start:end]``, of ``kind``."""

    start: int
    end: int
    kind: str


def markdown_blocks(text: str) -> list[MdBlock]:
    """The blocks of ``text`` in order (module docstring)."""
    out: list[MdBlock] = []
    lines = text.splitlines(keepends=True)
    position = 0
    start = -1  # the open run of non-blank lines
    structure = False
    fence = ""  # the open fence's marker
    fence_start = 0
    last_end = 0  # the end (newline excluded) of the last non-blank line seen
    for line in lines:
        bare = line.rstrip("\r\n")
        if fence:
            if re.match(r"^ {0,3}" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}\s*$", bare):
                out.append(MdBlock(fence_start, position + len(bare), CODE))
                fence = ""
            position += len(line)
            continue
        opened = _FENCE.match(bare)
        if opened or not bare.strip():
            if start >= 0:
                out.append(MdBlock(start, last_end, _kind(text, start, structure)))
                start = -1
            if opened:
                fence, fence_start = opened.group(1), position
        else:
            if start < 0:
                start, structure = position, False
            structure = structure or bool(_STRUCTURE_LINE.match(bare))
            last_end = position + len(bare)
        position += len(line)
    if fence:
        out.append(MdBlock(fence_start, len(text.rstrip()), CODE))
    elif start >= 0:
        out.append(MdBlock(start, last_end, _kind(text, start, structure)))
    return out


def _kind(text: str, start: int, structure: bool) -> str:
    if not structure:
        return PARAGRAPH
    return HEADING if _HEADING.match(text, start) else STRUCTURE
