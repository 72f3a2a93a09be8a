"""semchunk and Chonkie's ``RecursiveChunker`` as baselines, with exact offsets.

Both count sizes with the same tokenizer as our splitters (the model's, without special tokens)
so that a comparison differs only in where the boundaries go. semchunk returns offsets; Chonkie
returns ``start_index``/``end_index``; either way each chunk is checked against the text and,
where it does not match, located by its text from the end of the previous chunk. LangChain's
``RecursiveCharacterTextSplitter`` baseline lives in ``ragingest.splitters.recursive``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ragingest.chunk import Chunk
from ragingest.splitters.base import ChunkSplitter


def token_counter(tokenizer: Any) -> Callable[[str], int]:
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

    def __init__(self, chunk_size: int, tokenizer: Any) -> None:
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

    def __init__(self, chunk_size: int, tokenizer: Any) -> None:
        from chonkie import RecursiveChunker

        super().__init__(chunk_size=chunk_size, chunk_overlap=0)
        self.count = token_counter(tokenizer)
        # chonkie accepts any callable str -> int; its annotation names only its protocol
        self.chunker = RecursiveChunker(tokenizer=self.count, chunk_size=chunk_size)  # type: ignore[arg-type]

    def split_chunks(self, text: str, title: str = "") -> list[Chunk]:
        """``chonkie``'s chunks of ``text``, located in it, sized in tokens."""
        spans = [(c.text, c.start_index) for c in self.chunker.chunk(text)]
        return _with_sizes(located(text, spans, "chonkie"), self.count)
