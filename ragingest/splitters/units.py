"""What the content-type splitters share: a document is cut into *units* (an FAQ pair, a mail,
a ticket, a catalogue card), each unit is one chunk, and a unit over the size limit is packed
into pieces (``packing.pack``: paragraphs → lines → sentences → words) whose ``embed_text``
starts with the unit's ``lead`` (the question, the subject, ...) so every piece carries it.

Contract, as for heading-first: ``text == document[start_index:end_index]``, no leading or
trailing whitespace, sizes in the base splitter's measure, every ``embed_text`` within the
model's ``max_embed_tokens`` (checked with exact counts), tables and code cut only when over it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ragingest.chunk import DEFAULT_PARENT_SIZE, Chunk
from ragingest.splitters import deadline
from ragingest.splitters.base import ChunkSplitter
from ragingest.splitters.blocks import block_of, cut_block, piece_parents, table_header, with_header
from ragingest.splitters.counters import SpanCounter
from ragingest.splitters.dialects import clean_path, heading_title
from ragingest.splitters.measure import MIN_BUDGET, section_budget
from ragingest.splitters.packing import pack
from ragingest.splitters.structure import Structure, analyze


@dataclass(frozen=True)
class Unit:
    """One unit of a content type (an FAQ pair, a mail, a ticket, a card): ``[start, end)`` of
    the text, its headings and the lead every piece's embed text starts with."""
    start: int
    end: int
    headings: tuple[tuple[int, str], ...] = ()
    lead: str = ""  # what every piece's embed_text starts with (when the piece doesn't)


class UnitSplitter(ChunkSplitter):
    """Base of the content-type splitters; ``base`` is the run's ``HeadingFirstSplitter``
    (its measure, sizes and model limit are reused)."""

    strategy = "unit"
    overlap = False  # overlap between the pieces of one long unit

    def __init__(self, base: Any) -> None:
        self.base = base
        self.measure = base.measure
        self.token_measure = getattr(base, "token_measure", None)
        self.max_embed_tokens = getattr(base, "max_embed_tokens", None)
        self.chunk_size = base.chunk_size
        self.parent_chunk_size = getattr(base, "parent_chunk_size", DEFAULT_PARENT_SIZE)
        self.chunk_overlap = base.chunk_overlap if self.overlap else 0
        super().__init__(chunk_size=self.chunk_size, chunk_overlap=self.chunk_overlap)

    def units(self, text: str, structure: Structure) -> list[Unit]:
        """The units of ``text`` in order (each content type defines them)."""
        raise NotImplementedError

    def split_chunks(self, text: str, title: str = "") -> list[Chunk]:
        """One chunk per unit, a unit over the size limit packed into pieces; offsets exact,
        sizes in the base splitter's measure."""
        structure = analyze(text)
        doc_title = next((h.title for h in structure.headings if h.level == 1), "") or title
        counter = self.measure.index(text)
        tokens: list[SpanCounter] = []  # the document's token index, made on first need
        if self.token_measure is not None and self.measure.unit == "tokens":
            tokens.append(counter)
        chunks: list[Chunk] = []
        for unit in self.units(text, structure):
            deadline.check()  # the per-file time bound (``--file-timeout``)
            chunks.extend(self._cut(text, unit, doc_title, counter, structure, tokens=tokens))
        spans = [(c.start_index, c.end_index) for c in chunks]
        sizes = self.measure.exact_spans(text, counter, spans)
        return [replace(c, token_count=n) for c, n in zip(chunks, sizes, strict=True)]

    def _tokens(self, text: str, tokens: list[SpanCounter]) -> SpanCounter:
        if not tokens:
            tokens.append(self.token_measure.index(text))  # type: ignore[union-attr]
        return tokens[0]

    def _budget(self, lead: str) -> int:
        if self.max_embed_tokens is None or self.token_measure is None:
            return self.chunk_size
        cost = self.token_measure.cost(lead) + 1 if lead else 0
        if self.measure.unit == "tokens":
            return section_budget(self.chunk_size, self.max_embed_tokens, cost)
        return self.chunk_size

    def _cut(
        self,
        text: str,
        unit: Unit,
        doc_title: str,
        counter: SpanCounter,
        structure: Structure,
        budget: int | None = None,
        overlap: int | None = None,
        *,
        tokens: list[SpanCounter] | None = None,
    ) -> list[Chunk]:
        """``unit`` packed into chunks; ``tokens`` holds the document's token index once made
        (shared by the caller's units, so a document is tokenized once)."""
        tokens = [] if tokens is None else tokens
        budget = budget or self._budget(unit.lead)
        overlap = self.chunk_overlap if overlap is None else overlap
        spans = pack(text, unit.start, unit.end, budget, overlap, counter, structure)
        chunks = []
        for s, e in spans:
            body = text[s:e]
            block = structure.block_holding(s, e, slack=1)
            oversized = bool(block) and counter.count(s, e) > budget
            lead = unit.lead if unit.lead and unit.lead not in body.split("\n", 1)[0] else ""
            chunks.append(
                Chunk(
                    text=body,
                    start_index=s,
                    end_index=e,
                    token_count=0,
                    headings=clean_path(unit.headings),  # metadata: a dialect's anchors out
                    title=heading_title(doc_title) if doc_title else doc_title,
                    strategy="table" if block and block.kind == "table" else self.strategy,
                    embed_text=f"{lead}\n{body}" if lead else body,
                    oversized=oversized,
                )
            )
        if self.max_embed_tokens is None or self.token_measure is None:
            return chunks
        index = self._tokens(text, tokens)
        embeds = [(c.embed_text, c.start_index, c.end_index) for c in chunks]
        sizes = self.token_measure.exact_embedded(text, index, embeds)
        if all(n <= self.max_embed_tokens for n in sizes):
            return chunks
        out: list[Chunk] = []
        for chunk, n in zip(chunks, sizes, strict=True):
            if n <= self.max_embed_tokens:
                out.append(chunk)
                continue
            have = index.count(chunk.start_index, chunk.end_index)
            smaller = max(MIN_BUDGET, have - (n - self.max_embed_tokens) - 4)
            piece = Unit(chunk.start_index, chunk.end_index, unit.headings, unit.lead)
            block = block_of(structure, chunk.start_index, chunk.end_index)
            if not (chunk.oversized and block):
                out.extend(
                    self._cut(text, piece, doc_title, index, structure, smaller, 0, tokens=tokens)
                )
                continue
            # a table or code block over the model's limit (``blocks``): by rows/lines
            header = table_header(text, block)
            if header:
                smaller = max(MIN_BUDGET, smaller - self.token_measure.cost(header) - 1)
            if cut_block(text, chunk.start_index, chunk.end_index, smaller, index, structure) == [
                (chunk.start_index, chunk.end_index)
            ]:  # one unbreakable token run: nothing more to cut
                out.append(chunk)
                continue
            flat = replace(structure, blocks=[])
            parts = self._cut(text, piece, doc_title, index, flat, smaller, 0, tokens=tokens)
            spans = [(part.start_index, part.end_index) for part in parts]
            parents = piece_parents(text, block, spans, index, self.parent_chunk_size)
            for part, parent in zip(parts, parents, strict=True):
                embed = with_header(part.embed_text, part.text, header)
                size = self.token_measure.exact_embedded(
                    text, index, [(embed, part.start_index, part.end_index)]
                )[0]
                if size > self.max_embed_tokens:
                    embed = part.embed_text  # the header does not fit beside this piece
                out.append(replace(part, embed_text=embed, parent=parent))
        return out


def trim(text: str, start: int, end: int) -> tuple[int, int]:
    """``[start, end)`` narrowed to leave out leading and trailing whitespace."""
    body = text[start:end]
    lead = len(body) - len(body.lstrip())
    return start + lead, start + len(body.rstrip())
