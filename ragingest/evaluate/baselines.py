"""semchunk, Chonkie's ``RecursiveChunker`` and LlamaIndex's ``SentenceSplitter`` as baselines,
with exact offsets.

Both count sizes with the same tokenizer as our splitters (the model's, without special tokens)
so that a comparison differs only in where the boundaries go. semchunk returns offsets; Chonkie
returns ``start_index``/``end_index``; LlamaIndex returns texts only; either way each chunk is
checked against the text and, where it does not match, located by its text from the end of the
previous chunk. LangChain's ``RecursiveCharacterTextSplitter`` baseline lives in
``ragingest.splitters.recursive``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from ragingest.chunk import Chunk
from ragingest.splitters.base import ChunkSplitter

if TYPE_CHECKING:
    from ragingest.models.tokenizer_view import CountingTokenizer


def token_counter(tokenizer: CountingTokenizer) -> Callable[[str], int]:
    """A function counting the tokens of a text with ``tokenizer`` (special tokens left out)."""

    def count(text: str) -> int:
        return len(tokenizer(text, add_special_tokens=False)["input_ids"])

    return count


def located(text: str, pieces: Iterable[tuple[str, int | None]], strategy: str) -> list[Chunk]:
    """Chunks for ``(piece, start or None)`` in order: the start is kept where the piece is
    there, else the piece (stripped) is searched from the end of the previous chunk."""
    chunks: list[Chunk] = []
    cursor = 0
    for piece, start in pieces:
        body = piece.strip()
        if not body:
            continue
        if start is None or text[start : start + len(piece)] != piece:
            start = text.find(body, cursor)
            if start < 0:
                raise ValueError(f"{strategy}: chunk not found in the text: {body[:60]!r}")
        else:
            start += len(piece) - len(piece.lstrip())
        end = start + len(body)
        chunks.append(Chunk(body, start, end, 0, (), "", strategy, body))
        cursor = end
    return chunks


def _with_sizes(chunks: list[Chunk], count: Callable[[str], int]) -> list[Chunk]:
    from dataclasses import replace

    return [replace(c, token_count=count(c.text)) for c in chunks]


class SemchunkBaseline(ChunkSplitter):
    """``semchunk.chunkerify(counter, chunk_size)`` with ``offsets=True``."""

    def __init__(self, chunk_size: int, tokenizer: CountingTokenizer) -> None:
        import semchunk

        super().__init__(chunk_size=chunk_size, chunk_overlap=0)
        self.count = token_counter(tokenizer)
        self.chunker = semchunk.chunkerify(self.count, chunk_size)

    def split_chunks(self, text: str, title: str = "") -> list[Chunk]:
        """``semchunk``'s chunks of ``text``, located in it, sized in tokens."""
        pieces, offsets = self.chunker(text, offsets=True)
        spans = [(p, start) for p, (start, _) in zip(pieces, offsets, strict=True)]
        # semchunk types its pieces as Sequence[str] and offsets as object: they are str, int
        return _with_sizes(located(text, spans, "semchunk"), self.count)  # type: ignore[arg-type]


class ChonkieBaseline(ChunkSplitter):
    """``chonkie.RecursiveChunker(tokenizer=counter, chunk_size)`` with its default rules."""

    def __init__(self, chunk_size: int, tokenizer: CountingTokenizer) -> None:
        from chonkie import RecursiveChunker

        super().__init__(chunk_size=chunk_size, chunk_overlap=0)
        self.count = token_counter(tokenizer)
        # chonkie accepts any callable str -> int; its annotation names only its protocol
        self.chunker = RecursiveChunker(tokenizer=self.count, chunk_size=chunk_size)  # type: ignore[arg-type]

    def split_chunks(self, text: str, title: str = "") -> list[Chunk]:
        """``chonkie``'s chunks of ``text``, located in it, sized in tokens."""
        spans = [(c.text, c.start_index) for c in self.chunker.chunk(text)]
        return _with_sizes(located(text, spans, "chonkie"), self.count)


class LlamaIndexBaseline(ChunkSplitter):
    """``llama_index.core.node_parser.SentenceSplitter(chunk_size, chunk_overlap=0)`` counting
    with the same tokenizer; its sentence tokenizer (NLTK punkt) ships inside llama-index-core
    (``_static/nltk_cache``), so it runs offline."""

    def __init__(self, chunk_size: int, tokenizer: CountingTokenizer) -> None:
        from llama_index.core.node_parser import SentenceSplitter

        super().__init__(chunk_size=chunk_size, chunk_overlap=0)
        self.count = token_counter(tokenizer)

        def ids(text: str) -> list[int]:
            return list(tokenizer(text, add_special_tokens=False)["input_ids"])

        self.splitter = SentenceSplitter(chunk_size=chunk_size, chunk_overlap=0, tokenizer=ids)

    def split_chunks(self, text: str, title: str = "") -> list[Chunk]:
        """LlamaIndex's chunks of ``text`` (texts only), located in it, sized in tokens."""
        spans: list[tuple[str, int | None]] = [(p, None) for p in self.splitter.split_text(text)]
        return _with_sizes(located(text, spans, "llamaindex"), self.count)


def _visible(char: str) -> bool:
    """A character LangChain's ``MarkdownHeaderTextSplitter`` keeps as it is (it strips each
    line's edges, joins lines anew and drops non-printable characters)."""
    return not char.isspace() and char.isprintable()


class LangChainMarkdownBaseline(ChunkSplitter):
    """The pipeline a LangChain user writes for Markdown: ``MarkdownHeaderTextSplitter`` on
    h1–h3 (``strip_headers=False``), then ``RecursiveCharacterTextSplitter(chunk_size=1000,
    chunk_overlap=100)`` in characters on each section.

    LangChain rewrites the whitespace (lines stripped and re-joined), so each chunk is placed in
    the source by its visible characters: ``text`` is the source slice from its first to its
    last visible character, ``embed_text`` LangChain's ``page_content`` (what that user embeds),
    ``token_count`` its size in ``tokenizer``'s tokens. Chunks may overlap (the 100 characters).
    """

    def __init__(
        self, tokenizer: CountingTokenizer, chunk_size: int = 1000, chunk_overlap: int = 100
    ) -> None:
        from langchain_text_splitters import (
            MarkdownHeaderTextSplitter,
            RecursiveCharacterTextSplitter,
        )

        super().__init__(chunk_size=chunk_size, chunk_overlap=chunk_overlap)
        self.count = token_counter(tokenizer)
        self.headers = MarkdownHeaderTextSplitter(
            [("#", "h1"), ("##", "h2"), ("###", "h3")], strip_headers=False
        )
        self.recursive = RecursiveCharacterTextSplitter(
            chunk_size=chunk_size, chunk_overlap=chunk_overlap
        )

    def split_chunks(self, text: str, title: str = "") -> list[Chunk]:
        """LangChain's chunks of ``text``, each placed in it by its visible characters."""
        pieces = self.recursive.split_documents(self.headers.split_text(text))
        where = [i for i, char in enumerate(text) if _visible(char)]
        visible = "".join(text[i] for i in where)
        chunks: list[Chunk] = []
        cursor = 0
        for piece in pieces:
            body = "".join(filter(_visible, piece.page_content))
            if not body:
                continue
            found = visible.find(body, cursor)
            if found < 0:
                raise ValueError(f"langchain: chunk not found in the text: {body[:60]!r}")
            start, end = where[found], where[found + len(body) - 1] + 1
            content = piece.page_content
            chunks.append(
                Chunk(
                    text[start:end], start, end, self.count(content), (), "", "langchain", content
                )
            )
            cursor = found + 1  # the next chunk may begin inside this one (the overlap)
        return chunks
