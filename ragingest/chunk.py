"""The typed chunk every splitter returns (at the bottom of the layers: the schema, the loaders'
source maps and the splitters all speak it)."""

from __future__ import annotations

from dataclasses import dataclass

Strategy = str  # "heading" | "paragraph" | "recursive" | "fixed" | "table" (+ content types)
# the largest span parent expansion returns, in the splitter's units (a ~1000-token
# section), unless a splitter is given another
DEFAULT_PARENT_SIZE = 1000


@dataclass(frozen=True)
class Chunk:
    """One chunk of a document.

    Invariant: ``text == document[start_index:end_index]``. ``token_count`` is the size of
    ``text`` in the splitter's unit. ``embed_text`` is what gets embedded: the heading
    breadcrumb (when not already at the start of ``text``) followed by ``text``.
    """

    text: str
    start_index: int
    end_index: int
    token_count: int
    headings: tuple[tuple[int, str], ...]  # (level, title) from the top down
    title: str
    strategy: Strategy
    embed_text: str
    oversized: bool = False  # a whole table/code block over the chunk size, kept whole
    parent: tuple[int, int] | None = None  # the span parent expansion returns (None: itself)
    # a chunk merged from several sections: each one's heading path, in order (``headings``
    # is then their deepest common path); empty for a chunk of one section
    sections: tuple[tuple[tuple[int, str], ...], ...] = ()

    @property
    def parent_span(self) -> tuple[int, int]:
        """``[start, end)`` of the chunk's parent section (its own span when it has none)."""
        return self.parent or (self.start_index, self.end_index)

    @property
    def breadcrumb(self) -> tuple[str, ...]:
        """The title and headings above the chunk, in order."""
        return breadcrumb(self.title, self.headings)

    @property
    def section_path(self) -> str:
        """The breadcrumb as one string: 'Title > Section > Subsection'."""
        return " > ".join(self.breadcrumb)

    @property
    def section_paths(self) -> list[str]:
        """The breadcrumb of every section the chunk holds (one for a single-section chunk)."""
        paths = self.sections or (self.headings,)
        return [" > ".join(breadcrumb(self.title, path)) for path in paths]


def breadcrumb(title: str, headings: tuple[tuple[int, str], ...]) -> tuple[str, ...]:
    """``Title > Section > Subsection``; an H1 equal to the title is not repeated."""
    parts = [title] if title else []
    for _level, heading in headings:
        if not parts or heading != parts[-1]:
            parts.append(heading)
    return tuple(parts)
