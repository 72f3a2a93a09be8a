"""LangChain's ``RecursiveCharacterTextSplitter`` as a baseline, with exact offsets recovered.

The usual baseline for ordinary text: separators ``\\n\\n``, ``\\n``, space, character,
sizes measured with the same unit (and the same tokenizer) as our own splitters, so a
comparison differs only in where the boundaries go. With ``unit="tokens"`` this is
``RecursiveCharacterTextSplitter.from_huggingface_tokenizer``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragingest.chunk import Chunk
from ragingest.splitters.base import ChunkSplitter
from ragingest.splitters.measure import Measure

if TYPE_CHECKING:
    from ragingest.models.tokenizer_view import ModelTokenizer


class RecursiveBaseline(ChunkSplitter):
    """LangChain's ``RecursiveCharacterTextSplitter`` in our measure, with exact offsets (the
    baseline)."""

    def __init__(
        self,
        chunk_size: int,
        chunk_overlap: int = 0,
        unit: str = "tokens",
        tokenizer: ModelTokenizer | None = None,
    ) -> None:
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        super().__init__(chunk_size=chunk_size, chunk_overlap=chunk_overlap)
        self.measure = Measure(unit, tokenizer)  # type: ignore[arg-type]
        if unit == "tokens":
            self.splitter = RecursiveCharacterTextSplitter.from_huggingface_tokenizer(
                tokenizer, chunk_size=chunk_size, chunk_overlap=chunk_overlap, add_start_index=True
            )
        else:
            length = len if unit == "chars" else (lambda t: self.measure.exact([t])[0])
            self.splitter = RecursiveCharacterTextSplitter(
                chunk_size=chunk_size,
                chunk_overlap=chunk_overlap,
                length_function=length,
                add_start_index=True,
            )

    def split_chunks(self, text: str, title: str = "") -> list[Chunk]:
        """LangChain's recursive cut of ``text`` as chunks; offsets from its ``start_index``,
        sizes in our measure."""
        docs = self.splitter.create_documents([text])
        sizes = self.measure.exact([doc.page_content for doc in docs])
        chunks = []
        for doc, size in zip(docs, sizes, strict=True):
            start = doc.metadata["start_index"]
            body = doc.page_content
            chunks.append(Chunk(body, start, start + len(body), size, (), title, "recursive", body))
        return chunks
