"""The pieces of a heading-first split and the policy that shapes them: which parent section
each piece returns for parent expansion (``assign_parents``), which small pieces merge and
where (``merge_small``), and how a merged piece names the sections it holds (``named``).
``heading_first`` cuts sections into pieces and turns the pieces into chunks."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ragingest.splitters import deadline
from ragingest.splitters.counters import SpanCounter
from ragingest.splitters.structure import Heading, heading_paths


@dataclass
class Piece:
    """A span of the document on its way to becoming a chunk."""

    start: int
    end: int
    headings: tuple[tuple[int, str], ...]
    strategy: str
    section: int  # index of the section it was cut from
    oversized: bool = False
    parent: tuple[int, int] = (0, 0)  # span returned for parent expansion
    sections: tuple[tuple[tuple[int, str], ...], ...] = ()  # heading paths it holds, in order


def assign_parents(
    text: str,
    sections: list[tuple[int, int, tuple[tuple[int, str], ...], Heading | None]],
    pieces: list[Piece],
    counter: SpanCounter,
    top: int,
    budget: int,
) -> None:
    """Each piece's parent: its top-level section (a level-``top`` heading with its
    subsections) if that fits in ``budget``, else its own section; a longer section's pieces
    are grouped, in order, into runs that fit, each run the parent of its pieces."""
    groups: list[tuple[int, int]] = []  # per section: the span of its top-level group
    for start, end, headings, _ in sections:
        if len([h for h in headings if h[0] >= top]) <= 1 or not groups:
            groups.append((start, end))
        else:
            groups.append((groups[-1][0], end))
    for i in range(len(groups) - 2, -1, -1):  # extend each group to its last section
        if groups[i][0] == groups[i + 1][0]:
            groups[i] = groups[i + 1]
    group_spans = [trim(text, *g) for g in groups]
    section_spans = [trim(text, s, e) for s, e, _, _ in sections]
    group_fits = [counter.count(*g) <= budget for g in group_spans]
    section_fits = [counter.count(*s) <= budget for s in section_spans]
    run: list[Piece] = []  # consecutive pieces of one over-long section, one parent

    def close() -> None:
        for member in run:
            member.parent = (run[0].start, run[-1].end)
        run.clear()

    for piece in pieces:
        if group_fits[piece.section]:
            piece.parent = group_spans[piece.section]
        elif section_fits[piece.section]:
            piece.parent = section_spans[piece.section]
        else:
            if run and (
                run[0].section != piece.section or counter.count(run[0].start, piece.end) > budget
            ):
                close()
            run.append(piece)
            continue
        close()
    close()


def merge_small(
    pieces: list[Piece],
    counter: SpanCounter,
    min_size: int,
    budget: Callable[[Piece], int],
) -> list[Piece]:
    """Merge each piece under ``min_size`` into a neighbour while the result fits its
    ``budget`` (same parent span first, then same parent section, then the next, then the
    previous); tables and code over budget (``oversized``) never merge."""
    if min_size <= 0 or not pieces:
        return pieces
    # a doubly linked list over the pieces: a merge unlinks one in constant time (a list's
    # slice assignment moves the whole tail: quadratic over many small sections)
    nodes = list(pieces)
    after = [*range(1, len(nodes)), -1]
    before = list(range(-1, len(nodes) - 1))
    i = 0
    while i != -1:
        deadline.check()  # the per-file time bound (``--file-timeout``)
        piece = nodes[i]
        if piece.oversized or counter.count(piece.start, piece.end) >= min_size:
            i = after[i]
            continue
        options = []
        for j, is_next in ((after[i], True), (before[i], False)):
            if j == -1 or nodes[j].oversized:
                continue
            a, b = (i, j) if is_next else (j, i)
            merged = merge_pieces(nodes[a], nodes[b])
            if counter.count(merged.start, merged.end) <= budget(merged):
                same_parent = parent_path(nodes[i].headings) == parent_path(nodes[j].headings)
                same_window = nodes[i].parent == nodes[j].parent
                options.append((not same_window, not same_parent, not is_next, a, b, merged))
        if not options:
            i = after[i]
            continue
        *_, a, b, merged = min(options, key=lambda o: o[:3])
        nodes[a] = merged
        after[a] = after[b]
        if after[b] != -1:
            before[after[b]] = a
        i = a
    out = []
    i = 0
    while i != -1:
        out.append(nodes[i])
        i = after[i]
    return out


def sections_of(
    text: str, boundaries: list[Heading]
) -> Iterable[tuple[int, int, tuple[tuple[int, str], ...], Heading | None]]:
    """(start, end, heading path, own heading) for the preamble and each section."""
    starts = [h.start for h in boundaries]
    if not starts or text[: starts[0]].strip():
        yield 0, starts[0] if starts else len(text), (), None
    for i, (heading, path) in enumerate(zip(boundaries, heading_paths(boundaries), strict=True)):
        end = starts[i + 1] if i + 1 < len(starts) else len(text)
        yield heading.start, end, path, heading


Section = tuple[int, int, tuple[tuple[int, str], ...], Heading | None]


def attach_bodiless(
    text: str, sections: list[Section], headings: Sequence[Heading]
) -> list[Section]:
    """Sections, each one that holds nothing but heading lines (a title right above its first
    subsection) joined to the start of the next, as ``MarkdownHeaderTextSplitter`` files such
    a heading with the content under it: no chunk is a bare heading. The last section stays
    what it is (nothing follows to take it)."""
    out: list[Section] = []
    carried: int | None = None  # start of the bodiless sections waiting for a body
    ends = [h.end for h in headings]  # headings are in document order: ends ascend too
    for i, (start, end, path, heading) in enumerate(sections):
        begin = start if carried is None else carried
        if i + 1 < len(sections) and _only_headings(text, start, end, headings, ends):
            carried = begin
            continue
        out.append((begin, end, path, heading))
        carried = None
    return out


def _only_headings(
    text: str, start: int, end: int, headings: Sequence[Heading], ends: Sequence[int]
) -> bool:
    """Whether every non-whitespace character of ``text[start:end]`` is in a heading line.
    ``ends``: the headings' ends (ascending); only the headings overlapping the span are
    looked at, so a document's sections cost time linear in its headings, not quadratic."""
    at = start
    for index in range(bisect_right(ends, start), len(headings)):
        heading = headings[index]
        if heading.start >= end:
            break
        if text[at : heading.start].strip():
            return False
        at = max(at, heading.end)
    return not text[at:end].strip()


def parent_path(headings: tuple[tuple[int, str], ...]) -> tuple[tuple[int, str], ...]:
    """The heading path of the section above the last heading of ``headings``."""
    return headings[:-1]


def named(piece: Piece) -> tuple[tuple[tuple[int, str], ...], tuple[tuple, ...]]:
    """The heading path a piece is filed under and the sections it names: those it holds,
    less a path the next one extends (a heading with its subsection is named by it)."""
    held = piece.sections or (piece.headings,)
    nexts = [*held[1:], ()]
    sections = tuple(p for p, q in zip(held, nexts, strict=True) if q[: len(p)] != p)
    return (common_path(sections) if piece.sections else piece.headings), sections


def common_path(paths: Sequence[tuple[tuple[int, str], ...]]) -> tuple[tuple[int, str], ...]:
    """The deepest heading path all ``paths`` start with."""
    common: list[tuple[int, str]] = []
    for level in zip(*paths, strict=False):
        if any(x != level[0] for x in level):
            break
        common.append(level[0])
    return tuple(common)


def merge_pieces(a: Piece, b: Piece) -> Piece:
    """One piece spanning ``a`` and ``b`` (adjacent, ``a`` first): their common heading path,
    both sections' breadcrumbs, the parent span of both."""
    common = common_path([a.headings, b.headings])
    same_section = a.section == b.section
    strategy = (
        a.strategy
        if same_section and a.strategy == b.strategy
        else ("paragraph" if a.strategy == "paragraph" else "heading")
    )
    parent = (min(a.parent[0], b.parent[0]), max(a.parent[1], b.parent[1]))
    sections = tuple(
        dict.fromkeys([*(a.sections or (a.headings,)), *(b.sections or (b.headings,))])
    )
    return Piece(
        a.start, b.end, tuple(common), strategy, a.section, parent=parent, sections=sections
    )


def trim(text: str, start: int, end: int) -> tuple[int, int]:
    """``[start, end)`` without leading and trailing whitespace (no copy of the span)."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end
