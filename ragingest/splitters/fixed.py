"""Fixed-size windows: the baseline that structure-aware splitting is measured against.

Contract: windows of ``chunk_size`` units with step ``chunk_size - chunk_overlap``; the first
window that reaches the end of the text is the last (no tail that lies inside the previous
window). ``ValueError`` unless ``0 <= chunk_overlap < chunk_size``. A window is cut only at
unit starts, so ``text == document[start:end]``. In characters the windows are exact (the
seeds' windows); in words or tokens a window ends at its last unit (no trailing whitespace).
Structure is ignored on purpose: this is the baseline to compare against.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from langchain_core.documents import Document

from ragingest.chunk import Chunk
from ragingest.splitters.base import ChunkSplitter
from ragingest.splitters.chunk_metadata import breadcrumb_title, chunk_metadata
from ragingest.splitters.measure import Measure, Unit

if TYPE_CHECKING:
    from ragingest.models.tokenizer_view import ModelTokenizer


class FixedSizeSplitter(ChunkSplitter):
    """Fixed windows of ``chunk_size`` units with ``chunk_overlap`` (see the module docstring)."""

    def __init__(
        self,
        chunk_size: int,
        chunk_overlap: int = 0,
        unit: Unit = "chars",
        *,
        tokenizer: ModelTokenizer | None = None,
        title: str = "",
        **kwargs: Any,
    ) -> None:
        if not 0 <= chunk_overlap < chunk_size:
            raise ValueError(
                f"need 0 <= chunk_overlap < chunk_size, got {chunk_overlap} and {chunk_size}"
            )
        super().__init__(chunk_size=chunk_size, chunk_overlap=chunk_overlap, **kwargs)
        self.measure = Measure(unit, tokenizer)
        self.title = title

    def create_documents(
        self, texts: list[str], metadatas: Sequence[Mapping[str, object]] | None = None
    ) -> list[Document]:
        """One ``Document`` per window of each text, with the schema's chunk metadata built from
        ``metadatas``."""
        documents = []
        for i, text in enumerate(texts):
            base = dict(metadatas[i]) if metadatas else {}
            chunks = self.split_chunks(text, title=breadcrumb_title(base))
            for index, chunk in enumerate(chunks):
                metadata = chunk_metadata(base, chunk, index, len(chunks))
                documents.append(Document(page_content=chunk.text, metadata=metadata))
        return documents

    def split_chunks(self, text: str, title: str = "") -> list[Chunk]:
        """The windows of ``text`` as chunks; offsets exact."""
        starts: range | list[int]
        counter = self.measure.index(text)
        if self.measure.unit == "chars":
            starts = range(len(text))
        else:
            starts = counter.boundaries(0, len(text))
        step = self._chunk_size - self._chunk_overlap
        chunks: list[Chunk] = []
        for first in range(0, len(starts), step):
            last = first + self._chunk_size
            start = starts[first]
            end = starts[last] if last < len(starts) else len(text)
            body = text[start:end]
            if self.measure.unit != "chars":
                body = body.rstrip()  # whitespace between words/tokens is no unit
            if body.strip():
                chunks.append(self._chunk(body, start, title))
            if last >= len(starts):
                break
        spans = [(c.start_index, c.end_index) for c in chunks]
        sizes = self.measure.exact_spans(text, counter, spans)
        return [replace(c, token_count=n) for c, n in zip(chunks, sizes, strict=True)]

    def _chunk(self, body: str, start: int, title: str) -> Chunk:
        return Chunk(
            text=body,
            start_index=start,
            end_index=start + len(body),
            token_count=0,
            headings=(),
            title=title or self.title,
            strategy="fixed",
            embed_text=body,
        )
