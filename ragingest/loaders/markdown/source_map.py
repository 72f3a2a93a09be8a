"""Offsets from a loader's normalized Markdown back into the file as decoded.

A text loader (``.md``, ``.txt``) hands the splitter normalized Markdown: no BOM, ``\\n`` line
ends, no front matter, plain-text headings rewritten as ``#`` lines. Chunk offsets must index
the *source* instead: the file as decoded, where a BOM is one code point, ``\\r\\n`` and ``\\r``
stay and front matter counts. A ``SourceMap`` links the two texts.

Contract:

- A map is a sequence of pieces covering the normalized text ``[0, n)`` in order; each piece
  is *verbatim* (its characters equal the source run it maps to, one for one) or a
  *replacement* (a normalized run standing for a source run of any length, possibly empty:
  an inserted ``# `` maps to an empty source run just before the next source character).
  Source characters no piece covers were deleted (BOM, front matter, ``\\r`` of ``\\r\\n``, a
  setext underline). Source runs are in order (a replacement that a later step cut in two
  gives both parts its whole source run).
- ``span(start, end)``: a start inside a verbatim piece maps one for one, inside a replacement
  to the replacement's source start; an end likewise, to the replacement's source end.
  Deleted source characters are never at a span's edge: a chunk starting at normalized 0
  starts after the BOM and the front matter. ``start <= end`` always holds for the result.
- ``source[span(s, e)]`` therefore holds the chunk's characters with the deleted ones between
  them restored; that is the text stored (for Markdown, ``normalize_text`` of it is the
  normalized chunk text again). The embedded text stays the normalized one.

A document's chunks are moved into source offsets by ``source_offsets.to_source``.

``apply_edits`` builds text and map from edits (sorted, disjoint ``(start, end, new)``
replacements of the input); ``compose`` chains the maps of successive steps; ``diff_map``
rebuilds a map by line diff where a step cannot list its edits (boilerplate removal).
"""

from __future__ import annotations

import difflib
import re
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

Edit = tuple[int, int, str]  # replace input[start:end] with the string


@dataclass(frozen=True, eq=False)
class SourceMap:
    """Normalized → source offsets (module docstring). ``source`` is the decoded file."""

    source: str
    norm: array  # piece starts in the normalized text, increasing
    src: array  # piece starts in the source
    size: array  # piece lengths in the normalized text (> 0)
    src_size: array  # piece lengths in the source (== size for verbatim pieces)
    verbatim: bytes  # 1 for verbatim pieces

    @property
    def length(self) -> int:
        """Length of the normalized text."""
        return self.norm[-1] + self.size[-1] if self.norm else 0

    def start(self, offset: int) -> int:
        """The source offset of a span that starts at normalized ``offset``."""
        if not self.norm:
            return 0
        if offset >= self.length:
            return self.end(self.length)
        i = bisect_right(self.norm, offset) - 1
        return self.src[i] + (offset - self.norm[i] if self.verbatim[i] else 0)

    def end(self, offset: int) -> int:
        """The source offset (exclusive) of a span that ends at normalized ``offset``."""
        if not self.norm:
            return 0
        if offset <= 0:
            return self.start(0)
        i = min(bisect_left(self.norm, offset), len(self.norm)) - 1
        if self.verbatim[i]:
            return self.src[i] + min(offset - self.norm[i], self.size[i])
        return self.src[i] + self.src_size[i]

    def normalized(self, offset: int) -> int:
        """The first normalized offset whose ``start`` is at or after source ``offset``."""
        i = bisect_left(self.src, offset)
        if i and self.verbatim[i - 1] and offset < self.src[i - 1] + self.src_size[i - 1]:
            return self.norm[i - 1] + offset - self.src[i - 1]
        return self.norm[i] if i < len(self.norm) else self.length

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The source span of the normalized ``[start, end)``."""
        first = self.start(start)
        return first, max(first, self.end(end)) if end > start else first

    def text(self, start: int, end: int) -> str:
        """``source[span(start, end)]``."""
        first, last = self.span(start, end)
        return self.source[first:last]

    def compose(self, outer: SourceMap) -> SourceMap:
        """The map of ``outer``'s text into this map's source (``outer`` maps a text derived
        from this map's normalized text into that text)."""
        out = _Builder(self.source)
        for k in range(len(outer.norm)):
            a, m, size = outer.norm[k], outer.src[k], outer.size[k]
            if not outer.verbatim[k]:
                s, e = self.start(m), self.end(m + outer.src_size[k])
                out.piece(a, size, s, max(s, e) - s, False)
                continue
            first = max(bisect_right(self.norm, m) - 1, 0)
            last = max(bisect_left(self.norm, m + size) - 1, first)
            self._clipped(out, first, m, size, a)
            if last > first + 1:  # the pieces in between, whole: copied in bulk
                out.extend(self, first + 1, last, a - m)
            if last > first:
                self._clipped(out, last, m, size, a)
        return out.build()

    def _clipped(self, out: _Builder, i: int, m: int, size: int, a: int) -> None:
        """Piece ``i`` cut to the normalized ``[m, m + size)``, moved to ``a``."""
        lo, hi = max(m, self.norm[i]), min(m + size, self.norm[i] + self.size[i])
        if self.verbatim[i]:
            out.piece(a + lo - m, hi - lo, self.src[i] + lo - self.norm[i], hi - lo, True)
        else:
            out.piece(a + lo - m, hi - lo, self.src[i], self.src_size[i], False)


class _Builder:
    def __init__(self, source: str) -> None:
        self.source = source
        self.norm, self.src, self.size, self.src_size = (array("q") for _ in range(4))
        self.verbatim = bytearray()

    def piece(self, norm: int, size: int, src: int, src_size: int, verbatim: bool) -> _Builder:
        if size <= 0:
            return self
        if (  # a verbatim run continuing the previous one: extend it
            verbatim
            and self.verbatim
            and self.verbatim[-1]
            and self.norm[-1] + self.size[-1] == norm
            and self.src[-1] + self.src_size[-1] == src
        ):
            self.size[-1] += size
            self.src_size[-1] += size
            return self
        self.norm.append(norm)
        self.src.append(src)
        self.size.append(size)
        self.src_size.append(src_size)
        self.verbatim.append(1 if verbatim else 0)
        return self

    def extend(self, other: SourceMap, first: int, last: int, shift: int) -> None:
        """Append ``other``'s pieces ``first`` to ``last`` (exclusive), ``shift`` later."""
        self.norm.extend(array("q", (n + shift for n in other.norm[first:last])))
        self.src.extend(other.src[first:last])
        self.size.extend(other.size[first:last])
        self.src_size.extend(other.src_size[first:last])
        self.verbatim.extend(other.verbatim[first:last])

    def build(self) -> SourceMap:
        return SourceMap(
            self.source, self.norm, self.src, self.size, self.src_size, bytes(self.verbatim)
        )


def apply_edits(text: str, edits: Iterable[Edit]) -> tuple[str, SourceMap]:
    """``text`` with the edits applied, and the map of the result back into ``text``."""
    builder = _Builder(text)
    pieces: list[str] = []
    position = length = 0
    for start, end, new in edits:
        if start < position or end < start:
            raise ValueError(f"edits must be sorted and disjoint: {start, end} after {position}")
        builder.piece(length, start - position, position, start - position, True)
        pieces.append(text[position:start])
        length += start - position
        builder.piece(length, len(new), start, end - start, False)
        pieces.append(new)
        length += len(new)
        position = end
    builder.piece(length, len(text) - position, position, len(text) - position, True)
    pieces.append(text[position:])
    return "".join(pieces), builder.build()


_LINE_END = re.compile(r"\r\n?|\x00")


def normalize_edits(text: str) -> list[Edit]:
    """The edits of ``loaders.base.normalize_text``: leading BOMs and NULs out, ``\\r\\n`` →
    ``\\n`` (the ``\\r`` deleted, so the ``\\n`` stays verbatim), a lone ``\\r`` → ``\\n``."""
    bom = len(text) - len(text.lstrip("\ufeff"))
    edits: list[Edit] = [(0, bom, "")] if bom else []
    for match in _LINE_END.finditer(text, bom):
        found = match.group()
        if found == "\r":
            edits.append((match.start(), match.end(), "\n"))
        else:  # "\r\n": drop the "\r"; NUL: drop it
            edits.append((match.start(), match.start() + 1, ""))
    return edits


def normalize_mapped(text: str) -> tuple[str, SourceMap]:
    """``apply_edits(text, normalize_edits(text))``; built in bulk when the only edits are a
    BOM and the ``\r`` of each ``\r\n`` (the usual Windows file)."""
    bom = len(text) - len(text.lstrip("\ufeff"))
    if "\x00" in text or _LONE_CR.search(text):
        return apply_edits(text, normalize_edits(text))
    cuts = [match.start() for match in _CR.finditer(text, bom)]
    starts = [bom, *(cut + 1 for cut in cuts)]
    sizes = [end - start for start, end in zip(starts, [*cuts, len(text)], strict=True)]
    if sizes[0] == 0:  # the text starts with a line end
        starts, sizes = starts[1:], sizes[1:]
        shift = 1
    else:
        shift = 0
    norm = array("q", (start - bom - k - shift for k, start in enumerate(starts)))
    mapping = SourceMap(
        text, norm, array("q", starts), array("q", sizes), array("q", sizes), b"\x01" * len(sizes)
    )
    return text[bom:].replace("\r\n", "\n"), mapping


_LONE_CR = re.compile(r"\r(?!\n)")
_CR = re.compile("\r")


def diff_map(before: str, after: str) -> SourceMap:
    """A map of ``after`` into ``before`` by lines, for a step that does not list its edits:
    when ``after``'s lines are a subsequence of ``before``'s (lines removed), each maps
    verbatim to its first possible match; otherwise by a line diff (equal lines verbatim,
    changed ones as replacements)."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    old_at, new_at = _starts(old), _starts(new)
    builder = _Builder(before)
    i = 0
    for j, line in enumerate(new):
        while i < len(old) and old[i] != line:
            i += 1
        if i == len(old):
            break
        builder.piece(new_at[j], len(line), old_at[i], len(line), True)
        i += 1
    else:
        return builder.build()
    builder = _Builder(before)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        size = new_at[j2] - new_at[j1]
        builder.piece(new_at[j1], size, old_at[i1], old_at[i2] - old_at[i1], tag == "equal")
    return builder.build()


def _starts(lines: Sequence[str]) -> list[int]:
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    return starts
