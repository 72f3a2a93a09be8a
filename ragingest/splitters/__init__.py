"""Splitters: a normalized document in, ``Chunk``s with exact offsets out."""

from collections.abc import Iterable

from langchain_core.documents import Document

from ragingest.chunk import Chunk
from ragingest.splitters.base import ChunkSplitter
from ragingest.splitters.fixed import FixedSizeSplitter
from ragingest.splitters.heading_first import HeadingFirstSplitter
from ragingest.splitters.measure import Measure


def for_vectorstore(
    documents: Iterable[Document],
    splitter: ChunkSplitter | None = None,
    *,
    parents: bool = False,
) -> list[Document]:
    """``documents`` split (by ``splitter``, default ``HeadingFirstSplitter()``) into what a
    plain LangChain pipeline's vector store should embed: ``page_content`` is ingest's embedded
    text (breadcrumb + words), the metadata ingest's, ``start_index``/``end_index`` the exact
    slice; ``parents=True`` adds each chunk's parent section as ``parent_text``
    (``splitters.documents``)."""
    from ragingest.splitters.documents import vectorstore_documents

    return vectorstore_documents(splitter or HeadingFirstSplitter(), documents, parents)


__all__ = ["Chunk", "FixedSizeSplitter", "HeadingFirstSplitter", "Measure", "for_vectorstore"]
