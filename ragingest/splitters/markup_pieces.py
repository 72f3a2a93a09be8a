"""Pieces that are almost all markup (a dialect's containers, tags, opaque link targets:
``dialects``) join a neighbour instead of being embedded alone.

Contract: ``markup_only(body)``: a body that is almost all markup (what ``dialects.words``
keeps is under a fifth of its letters and digits, and under ``4 * MARKUP_WORDS`` of them);
``absorb_markup(text, pieces)``: each such piece joined to a neighbour, keeping the neighbour's
headings.
"""

from __future__ import annotations

import bisect
from dataclasses import replace
from typing import TYPE_CHECKING

from ragingest.splitters.dialects import opaque_urls, words

if TYPE_CHECKING:  # the type only: ``pieces`` is imported by the modules that import this one
    from ragingest.splitters.pieces import Piece

MARKUP_WORDS = 16  # a piece keeping fewer word characters than this is markup


def markup_only(body: str, reduced: str | None = None) -> bool:
    """Whether ``body`` is almost all markup (module docstring); ``reduced``: ``body`` less
    the parts of opaque link targets that a cut left without their link."""
    letters = 0
    for ch in words(body if reduced is None else reduced):
        if ch.isalnum():
            letters += 1
            if letters >= MARKUP_WORDS * 4:  # a paragraph of words is never markup
                return False
    return letters * 5 < sum(1 for ch in body if ch.isalnum())


def absorb_markup(text: str, pieces: list[Piece]) -> list[Piece]:
    """``pieces`` with each markup-only one joined to a neighbour (the previous one of its
    section, else the next, else the previous): the span grows, the neighbour's headings,
    strategy and sections stay; whatever the size, since the markup adds nothing the model
    reads (``words``). An opaque link target cut across pieces counts as markup in each."""
    if len(pieces) < 2:
        return pieces
    blobs = opaque_urls(text)
    out = list(pieces)
    i = 0
    while i < len(out) and len(out) > 1:
        piece = out[i]
        body = text[piece.start : piece.end]
        if piece.oversized or not markup_only(body, _without(text, piece, blobs)):
            i += 1
            continue
        before = i - 1 if i > 0 else None
        after = i + 1 if i + 1 < len(out) else None
        if before is not None and (out[before].section == piece.section or after is None):
            into = out[before]
            joined = replace(into, end=piece.end, parent=_parent(into, piece))
            out[before : i + 1] = [joined]
            i = before
            continue
        assert after is not None
        into = out[after]
        joined = replace(into, start=piece.start, parent=_parent(into, piece))
        out[i : after + 1] = [joined]
    return out


def _without(text: str, piece: Piece, blobs: list[tuple[int, int]]) -> str | None:
    """The piece's text less what of it lies in an opaque URL (None: nothing does)."""
    first = bisect.bisect_right(blobs, piece.start, key=lambda blob: blob[1])
    inside = []
    for a, b in blobs[first:]:  # sorted, disjoint: from the first that ends after the start
        if a >= piece.end:
            break
        inside.append((max(a, piece.start), min(b, piece.end)))
    if not inside:
        return None
    parts, pos = [], piece.start
    for a, b in inside:
        parts.append(text[pos:a])
        pos = b
    parts.append(text[pos : piece.end])
    return "".join(parts)


def _parent(into: Piece, piece: Piece) -> tuple[int, int]:
    return (min(into.parent[0], piece.start), max(into.parent[1], piece.end))
