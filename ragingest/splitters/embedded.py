"""What the model sees of a heading-first chunk: its breadcrumb and text, within the model's limit.

Contract (``EmbeddedText``, built from a splitter's settings for one split):

- ``prefix``: what the model reads before the body, within ``1 / BREADCRUMB_SHARE`` of the
  budget: the document's H1 and the nearest heading the chunk lies under (a deeper heading
  inside its section included) not already written at the start of the body; the metadata
  title only for a chunk under no heading; for a chunk holding several sections, the H1 and
  nearest heading of their common path, then each section's own headings, ``; ``-joined;
  empty without ``context_prefix``. The middle of the path is left to the metadata
  (``section_path``): sibling chunks of a long section that shared it crowded each other at
  the first rank, and a front-matter title repeated on every chunk of a page did the same
  (bench/README.md, "The breadcrumb in the embedded text");
- ``budget``: the chunk size for a section, less what its breadcrumb costs the model (when
  sizes are model tokens and the limit is known);
- ``chunk``: a ``Piece`` as a ``Chunk``, ``embed_text = prefix + "\\n" + words(text)``: the
  text with a documentation dialect's markup out (``splitters.dialects``; the stored text
  stays the exact slice); the chunk's headings and title (``section_path``, ``h1``–``h3``,
  ``title``) lose a dialect's anchors and tags, while the breadcrumb keeps the headings as
  written: e5 reads the English words of ``{#anchor}``s (clickhouse_ru dense R@5 92 → 89
  without them, bench/README.md, "Documentation dialects");
- ``fit``: exact sizes (``token_count``, from the document's indexes, not re-tokenized), then
  every chunk whose embedded text is over ``max_embed_tokens`` cut again in model tokens: by
  ``packing.pack``, else (a table or code block) by rows/lines with the table's header kept in
  each part's embedded text; a single unbreakable token run stays one chunk, ``oversized``;
  a part that lies inside a neighbour (with overlap, a re-cut chunk reaches into both) is
  dropped, so the chunks stay in order, none inside another.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ragingest.chunk import BREADCRUMB_SHARE, Chunk, bound_breadcrumb
from ragingest.splitters.blocks import block_of, cut_block, piece_parents, table_header, with_header
from ragingest.splitters.counters import SpanCounter
from ragingest.splitters.dialects import clean_path, heading_title, inline_words, words
from ragingest.splitters.measure import MIN_BUDGET, Measure, section_budget
from ragingest.splitters.packing import pack
from ragingest.splitters.pieces import Piece, named
from ragingest.splitters.structure import Path, Structure


@dataclass(frozen=True)
class EmbeddedText:
    """A splitter's settings for the embedded text (see the module docstring)."""

    measure: Measure  # the splitter's sizes
    token_measure: Measure | None  # model tokens (None: no model known)
    chunk_size: int
    max_embed_tokens: int | None
    context_prefix: bool
    sized_by_function: bool  # sizes from a length function: the limit is still model tokens
    parent_chunk_size: int

    def token_index(self, text: str, counter: SpanCounter) -> SpanCounter | None:
        """The document's token index (the size counter itself when sizes are tokens); None
        when nothing needs it (no model limit, sizes not counted by a length function)."""
        needed = self.max_embed_tokens is not None or self.sized_by_function
        if not needed or self.token_measure is None:
            return None
        return counter if self.measure.unit == "tokens" else self.token_measure.index(text)

    def budget(self, doc_title: str, headings: Path, sections: Sequence[Path] = ()) -> int:
        """Chunk size for a section: ``chunk_size`` minus what its breadcrumb costs the model."""
        if self.max_embed_tokens is None or self.token_measure is None:
            return self.chunk_size
        prefix = self.prefix(doc_title, headings, "", sections)
        cost = self.token_measure.cost(prefix) if prefix else 0
        if self.measure.unit == "tokens":
            return section_budget(self.chunk_size, self.max_embed_tokens, cost)
        return self.chunk_size

    def prefix(
        self, doc_title: str, headings: Path, body: str, sections: Sequence[Path] = ()
    ) -> str:
        """The H1 and nearest heading of ``headings`` not already written at the start of
        ``body`` (``doc_title`` under no heading); for a chunk holding several sections, those
        of the common path then each section's own headings, ``; ``-joined."""
        if not self.context_prefix:
            return ""
        tails = [" > ".join(t for _, t in path[len(headings) :]) for path in sections]
        if len(sections) > 1 and any(tails):
            ends = h1_and_nearest(headings)
            return self._bounded(" > ".join([*ends, "; ".join(t for t in tails if t)]))
        if not headings:
            return self._bounded(doc_title)
        written = body.split("\n", 1)[0].lstrip("# ").strip() if body.startswith("#") else ""
        path = headings[:-1] if headings[-1][1] == written else headings
        return self._bounded(" > ".join(h1_and_nearest(path)))

    def _bounded(self, prefix: str) -> str:
        """``prefix`` (a dialect's tags and shortcodes out: ``dialects.inline_words``) within
        ``1 / BREADCRUMB_SHARE`` of the chunk budget, in model tokens when the model is known
        (else in the splitter's unit)."""
        prefix = inline_words(prefix)
        if self.token_measure is not None and self.max_embed_tokens:
            measure, budget = self.token_measure, self.max_embed_tokens
        else:
            measure, budget = self.measure, self.chunk_size
        return bound_breadcrumb(prefix, max(1, budget // BREADCRUMB_SHARE), measure.cost)

    def chunk(self, text: str, piece: Piece, doc_title: str, structure: Structure) -> Chunk:
        """``piece`` of ``text`` as a ``Chunk`` (``token_count`` is set by ``fit``)."""
        body = text[piece.start : piece.end]
        # a path that the next one extends (a heading with its subsection) is named by it
        headings, sections = named(piece)
        under = headings if len(sections) > 1 else deeper(headings, structure.open_at(piece.start))
        read = words(body)  # a dialect's markup out: the model reads the words
        prefix = self.prefix(doc_title, under, body, sections)
        return Chunk(
            text=body,
            start_index=piece.start,
            end_index=piece.end,
            token_count=0,
            headings=clean_path(headings),
            title=heading_title(doc_title) if doc_title else doc_title,
            strategy=piece.strategy,
            embed_text=f"{prefix}\n{read}" if prefix else read,
            oversized=piece.oversized,
            parent=piece.parent,
            sections=tuple(clean_path(p) for p in sections) if len(sections) > 1 else (),
        )

    def fit(
        self,
        text: str,
        chunks: list[Chunk],
        structure: Structure,
        doc_title: str,
        counter: SpanCounter,
        tokens: SpanCounter | None,
    ) -> list[Chunk]:
        """Exact sizes; re-cut any chunk whose embedded text is over the model's limit.
        Counted from the document's indexes (``Measure.exact_spans``), not re-tokenized."""
        spans = [(c.start_index, c.end_index) for c in chunks]
        if self.sized_by_function and self.token_measure is not None and tokens is not None:
            sizes = self.token_measure.exact_spans(text, tokens, spans)  # model tokens
        else:
            sizes = self.measure.exact_spans(text, counter, spans)
        chunks = [replace(c, token_count=n) for c, n in zip(chunks, sizes, strict=True)]
        if self.max_embed_tokens is None or self.token_measure is None or tokens is None:
            return chunks
        embeds = [(c.embed_text, c.start_index, c.end_index) for c in chunks]
        embedded = self.token_measure.exact_embedded(text, tokens, embeds)
        out: list[Chunk] = []
        for chunk, n in zip(chunks, embedded, strict=True):
            if n <= self.max_embed_tokens:
                out.append(chunk)
                continue
            out.extend(self._recut(text, chunk, n, structure, doc_title, counter, tokens))
        return without_nested(out) if len(out) > len(chunks) else out

    def _recut(
        self,
        text: str,
        chunk: Chunk,
        embedded: int,
        structure: Structure,
        doc_title: str,
        sizes: SpanCounter,
        counter: SpanCounter,
    ) -> list[Chunk]:
        """Cut a chunk over the model's limit, in model tokens (``counter``)."""
        assert self.max_embed_tokens is not None and self.token_measure is not None  # by ``fit``
        budget = counter.count(chunk.start_index, chunk.end_index) - (
            embedded - self.max_embed_tokens
        )
        budget = max(MIN_BUDGET, budget - 4)
        span = (chunk.start_index, chunk.end_index)
        spans = pack(text, *span, budget, 0, counter, structure)
        if spans != [span]:
            pieces = [
                Piece(s, e, chunk.headings, chunk.strategy, 0, parent=chunk.parent_span)
                for s, e in spans
            ]
            chunks = [self.chunk(text, p, doc_title, structure) for p in pieces]
            return self.fit(text, chunks, structure, doc_title, sizes, counter)
        # a table or code block over the model's limit (``blocks``): by rows/lines
        block = block_of(structure, *span)
        header = table_header(text, block) if block else ""
        if header:
            budget = max(MIN_BUDGET, budget - self.token_measure.cost(header) - 1)
        spans = cut_block(text, *span, budget, counter, structure)
        if spans == [span]:  # one unbreakable token run: nothing more to cut
            return [replace(chunk, oversized=True)]
        chunks = []
        parents = piece_parents(text, block, spans, sizes, self.parent_chunk_size)
        for (s, e), parent in zip(spans, parents, strict=True):
            piece = Piece(s, e, chunk.headings, chunk.strategy, 0, parent=parent)
            part = self.chunk(text, piece, doc_title, structure)
            embed = with_header(part.embed_text, part.text, header)
            chunks.append(replace(part, embed_text=embed))
        flat = replace(structure, blocks=[])
        return self.fit(text, chunks, flat, doc_title, sizes, counter)


def without_nested(chunks: list[Chunk]) -> list[Chunk]:
    """``chunks`` in document order, less each one whose span lies inside another's: the
    parts of an overlapping chunk cut again reach into its neighbours, and a part inside one
    holds nothing it does not (kept: the first of equal spans, the longer of two that start
    together)."""
    kept: list[Chunk] = []
    reach = -1
    for chunk in sorted(chunks, key=lambda c: (c.start_index, -c.end_index)):
        if chunk.end_index > reach:
            kept.append(chunk)
            reach = chunk.end_index
    return kept


def deeper(headings: Path, open_path: Path) -> Path:
    """``headings`` continued by the headings of ``open_path`` below its last one: the deeper
    heading (below the split levels) a chunk cut from the middle of a long section lies under."""
    if not headings or headings[-1] not in open_path:
        return headings
    last = len(open_path) - 1 - open_path[::-1].index(headings[-1])
    return headings + open_path[last + 1 :]


def h1_and_nearest(path: Path) -> list[str]:
    """The last H1 of ``path`` and its nearest (last) heading when that is not an H1."""
    h1 = [title for level, title in path if level == 1][-1:]
    return h1 + [title for level, title in path[-1:] if level != 1]
