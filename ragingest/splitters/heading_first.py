"""Heading-first splitting (the rules: docs/rules.md): structure → sections → size normalization.

Contract, for ``split_chunks(text)``:

1. Structure: Markdown ATX headings outside code fences. With none, the text is one body
   split by paragraphs (strategy ``paragraph``).
2. Sections start at every heading of level ≤ ``max(split_levels)`` (default H2/H3); the first
   H1 is the document title (metadata and breadcrumb); deeper headings stay inside a section
   (a chunk cut below one embeds it: ``splitters.embedded``).
3. Sizes, in the measure's units: a section over the budget is cut by paragraphs, then lines,
   sentences, words (``packing.pack``), with ``chunk_overlap`` only between pieces of that one
   section (strategy ``recursive``; ``paragraph`` for heading-less text, where a line or
   paragraph break that fits is preferred to any later sentence). Then a piece under
   ``min_chunk_size`` merges into a neighbour (same parent span first, then same parent
   section, then the next, then the previous) while the result fits, so a small document of
   tiny sections is one chunk. Tables and fenced code are not cut; one over budget is its own
   chunk, ``oversized``, unless it is over the model's limit (``blocks``: then by rows/lines).
   With ``fallback`` (``"semantic"`` or a ``SemanticBoundaries``), a section over the budget
   is first cut where the topic shifts, then packed (strategy ``semantic``).
4. Parents (``Chunk.parent``, for parent expansion): a chunk's top-level section (an H2 with
   its H3s) if that fits in ``parent_chunk_size`` (default ``max(1000, chunk_size)`` units),
   else its own section; the chunks of a longer section are grouped, in order, into runs that
   fit, each run their parent. A merged chunk's parent spans both parents.

Every chunk satisfies ``text == document[start_index:end_index]`` with no leading or trailing
whitespace, every non-whitespace character lies in some chunk, and each chunk starts after the
one before it, none inside another. When ``max_embed_tokens``
is set, every ``embed_text`` (breadcrumb + text) fits in it, checked with exact token counts.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.documents import Document

from ragingest.chunk import DEFAULT_PARENT_SIZE, Chunk
from ragingest.defaults import MIN_CHUNK_SIZE, SPLIT_LEVELS
from ragingest.splitters import deadline
from ragingest.splitters.base import ChunkSplitter
from ragingest.splitters.chunk_metadata import breadcrumb_title, chunk_metadata
from ragingest.splitters.conventions import (
    LangChainConventions,
    check_separators,
    levels,
    measures,
)
from ragingest.splitters.counters import SpanCounter
from ragingest.splitters.embedded import EmbeddedText
from ragingest.splitters.markup_pieces import absorb_markup
from ragingest.splitters.measure import Unit
from ragingest.splitters.packing import pack
from ragingest.splitters.pieces import (
    Piece,
    assign_parents,
    attach_bodiless,
    merge_small,
    named,
    sections_of,
)
from ragingest.splitters.sizing import resolve_sizing
from ragingest.splitters.structure import Heading, Structure, analyze

if TYPE_CHECKING:
    from ragingest.models.tokenizer_view import ModelTokenizer
    from ragingest.splitters.semantic import SemanticBoundaries

log = logging.getLogger(__name__)


class HeadingFirstSplitter(LangChainConventions, ChunkSplitter):
    """LangChain ``TextSplitter`` for the heading-first strategy (see module docstring)."""

    def __init__(
        self,
        chunk_size: int | None = None,
        chunk_overlap: int | None = None,
        min_chunk_size: int = MIN_CHUNK_SIZE,
        *,
        unit: Unit = "tokens",
        tokenizer: ModelTokenizer | None = None,
        model: str | None = None,
        max_embed_tokens: int | None = None,
        split_levels: Sequence[int] = SPLIT_LEVELS,
        context_prefix: bool = True,
        title: str = "",
        fallback: Literal["semantic"] | SemanticBoundaries | None = None,
        parent_chunk_size: int | None = None,
        headers_to_split_on: Sequence[tuple[str, str]] | None = None,
        strip_headers: bool = False,
        separators: Sequence[str] | None = None,
        keep_separator: bool | Literal["start", "end"] = True,
        is_separator_regex: bool = False,
        length_function: Callable[[str], int] | None = None,
        add_start_index: bool = True,
        strip_whitespace: bool = True,
        **kwargs: Any,
    ) -> None:
        """Arguments as LangChain's splitters spell them are honoured or refused with the
        alternative named (``conventions``); sizes are in ``unit`` (model tokens by default)
        or counted with ``length_function``."""
        check_separators(separators, keep_separator, is_separator_regex, strip_whitespace)
        # a length function decides the packing size only: the model's limit still holds, in
        # model tokens (breadcrumb included), and ``token_count`` stays model tokens
        sizing = resolve_sizing(
            chunk_size,
            chunk_overlap,
            min_chunk_size,
            unit=unit,
            tokenizer=tokenizer,
            model=model,
            max_embed_tokens=max_embed_tokens,
            length_function=length_function,
        )
        self.sized_by_function = sizing.sized_by_function
        size, overlap = sizing.chunk_size, sizing.chunk_overlap
        max_embed_tokens = sizing.max_embed_tokens
        super().__init__(
            chunk_size=size, chunk_overlap=overlap, add_start_index=add_start_index, **kwargs
        )
        self.chunk_size, self.chunk_overlap = size, overlap  # public: TextSplitter's are private
        self.min_chunk_size = min_chunk_size
        self.measure, self.token_measure = measures(
            sizing.unit, sizing.tokenizer, sizing.length_function
        )
        self.header_names = levels(headers_to_split_on) if headers_to_split_on else None
        split_levels = sorted(self.header_names) if self.header_names else split_levels
        self.strip_headers = strip_headers
        self.max_embed_tokens = max_embed_tokens
        self.split_levels = tuple(sorted(split_levels))
        self.context_prefix = context_prefix
        self.title = title
        if fallback == "semantic":
            from ragingest.splitters.semantic import SemanticBoundaries

            fallback = SemanticBoundaries.from_model(model)
        if fallback is not None and not hasattr(fallback, "breakpoints"):
            raise ValueError("fallback must be None, 'semantic' or a SemanticBoundaries")
        self.fallback = fallback
        parent = parent_chunk_size or max(DEFAULT_PARENT_SIZE, size)
        if parent < size:
            raise ValueError(f"parent_chunk_size {parent} is under chunk_size {size}")
        self.parent_chunk_size = parent

    # -- LangChain interface -------------------------------------------------------------
    def split_documents(self, documents: Iterable[Document]) -> list[Document]:
        """LangChain's ``split_documents`` after ``loaders.markdown.pages.normalize_documents``: the
        pages or elements of one source (PyPDFLoader, UnstructuredLoader, ...) are joined into
        one document with a page map, front matter becomes metadata. ``page_content`` is the
        exact slice ``text_given[start_index:end_index]`` of the text given, front matter,
        BOM and CRLF included (a document of ragingest's own file loaders: the file)."""
        from ragingest.splitters.documents import chunked  # loaders: not on a query's path

        out: list[Document] = []
        for base, chunks, _text in chunked(self, documents):
            for index, chunk in enumerate(chunks):
                metadata = self.langchain_metadata(
                    chunk_metadata(base, chunk, index, len(chunks)), chunk
                )
                out.append(Document(page_content=chunk.text, metadata=metadata))
        return out

    def for_vectorstore(
        self, documents: Iterable[Document], *, parents: bool = False
    ) -> list[Document]:
        """The chunks of ``documents`` as ingest embeds them, for a vector store that embeds
        ``page_content`` (``Chroma.from_documents``): the breadcrumb and the words, the exact
        slice in the offsets, with ``parents`` the parent section in ``parent_text``
        (``splitters.documents``)."""
        from ragingest.splitters.documents import vectorstore_documents

        return vectorstore_documents(self, documents, parents)

    def create_documents(
        self, texts: list[str], metadatas: Sequence[Mapping[str, object]] | None = None
    ) -> list[Document]:
        """One ``Document`` per chunk of each text, with the schema's chunk metadata built from
        ``metadatas`` and LangChain's header keys."""
        documents: list[Document] = []
        for i, text in enumerate(texts):
            base = dict(metadatas[i]) if metadatas else {}
            chunks = self.split_chunks(text, title=breadcrumb_title(base))
            for index, chunk in enumerate(chunks):
                metadata = self.langchain_metadata(
                    chunk_metadata(base, chunk, index, len(chunks)), chunk
                )
                documents.append(Document(page_content=chunk.text, metadata=metadata))
        return documents

    def _sections(
        self, text: str, structure: Structure
    ) -> list[tuple[int, int, tuple[tuple[int, str], ...], Heading | None]]:
        """(start, end, heading path, own heading) of the preamble and each section."""
        if self.header_names:
            boundaries = [h for h in structure.headings if h.level in self.header_names]
        else:
            boundaries = [h for h in structure.headings if h.level <= self.split_levels[-1]]
        sections = attach_bodiless(text, list(sections_of(text, boundaries)), structure.headings)
        if self.strip_headers:
            sections = [(h.end if h else s, e, p, h) for s, e, p, h in sections]
        return sections

    def _embedded_text(self) -> EmbeddedText:
        """This splitter's settings for the embedded text (``splitters.embedded``), read now:
        a setting changed after construction counts."""
        return EmbeddedText(
            measure=self.measure,
            token_measure=self.token_measure,
            chunk_size=self.chunk_size,
            max_embed_tokens=self.max_embed_tokens,
            context_prefix=self.context_prefix,
            sized_by_function=self.sized_by_function,
            parent_chunk_size=self.parent_chunk_size,
        )

    # -- the algorithm -------------------------------------------------------------------
    def split_chunks(self, text: str, title: str = "") -> list[Chunk]:
        """The heading-first chunks of ``text`` (see the module docstring for the contract);
        ``title`` starts the breadcrumb when the text has no H1."""
        structure = analyze(text)
        counter = self.measure.index(text)
        doc_title = next((h.title for h in structure.headings if h.level == 1), "")
        doc_title = doc_title or title or self.title
        embedded = self._embedded_text()
        pieces: list[Piece] = []
        sections = self._sections(text, structure)
        strategy = "heading" if any(section[3] for section in sections) else "paragraph"
        for index, (start, end, headings, heading) in enumerate(sections):
            deadline.check()  # the per-file time bound (``--file-timeout``)
            pieces.extend(
                self._cut_section(
                    text,
                    start,
                    end,
                    headings,
                    heading,
                    strategy,
                    index,
                    embedded.budget(doc_title, headings),
                    counter,
                    structure,
                )
            )
        assign_parents(
            text, sections, pieces, counter, self.split_levels[0], self.parent_chunk_size
        )
        pieces = merge_small(
            pieces,
            counter,
            self.min_chunk_size,
            lambda piece: embedded.budget(doc_title, *named(piece)),
        )
        pieces = absorb_markup(text, pieces)  # a piece of pure markup is not embedded alone
        chunks = []
        for piece in pieces:
            deadline.check()
            chunks.append(embedded.chunk(text, piece, doc_title, structure))
        tokens = embedded.token_index(text, counter)
        return embedded.fit(text, chunks, structure, doc_title, counter, tokens)

    def _cut_section(
        self,
        text: str,
        start: int,
        end: int,
        headings: tuple[tuple[int, str], ...],
        heading: Heading | None,
        strategy: str,
        index: int,
        budget: int,
        counter: SpanCounter,
        structure: Structure,
    ) -> list[Piece]:
        """The pieces of one section, each within ``budget`` (a table or code block over it
        is its own piece, ``oversized``)."""
        by_paragraph = strategy == "paragraph"  # no headings: paragraphs are the structure
        overlap = self._chunk_overlap
        edges = [start, end]
        if self.fallback is not None and counter.count(start, end) > budget:
            edges = [start, *self.fallback.breakpoints(text, start, end, structure), end]
            strategy = "semantic"
        spans = [
            span
            for a, b in itertools.pairwise(edges)
            for span in pack(text, a, b, budget, overlap, counter, structure, by_paragraph)
        ]
        if len(spans) > 1 and strategy == "heading":
            strategy = "recursive"
        pieces = []
        for s, e in spans:
            block = structure.block_holding(s, e, slack=1)
            kind = "table" if block and block.kind == "table" else strategy
            too_big = counter.count(s, e) > budget
            oversized = too_big and bool(block)
            pieces.append(Piece(s, e, headings, kind, index, oversized, sections=(headings,)))
        return pieces
