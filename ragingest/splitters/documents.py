"""A splitter's chunks as LangChain ``Document``s, for ``split_documents`` and for a plain
LangChain pipeline's vector store.

Contract:

- ``chunked(splitter, documents)``: per document after
  ``loaders.markdown.pages.normalize_documents`` (pages joined, front matter out into the metadata),
  its metadata and chunks in the offsets of the text given (``to_source``: the ``page_content``
  passed in, front matter, BOM and CRLF included; a document of ragingest's own file loaders: the
  file), and that text.
- ``vectorstore_documents(splitter, documents, parents)``: one ``Document`` per chunk whose
  ``page_content`` is what ingest embeds (``Chunk.embed_text``: the breadcrumb, then the text
  with a documentation dialect's markup out), so a vector store that embeds ``page_content``
  (``Chroma.from_documents``) ranks as ingest does; the metadata is ingest's
  (``splitters.chunk_metadata``), ``start_index``/``end_index`` giving the exact slice of the text
  given; with ``parents``, ``parent_text`` holds the exact slice of the chunk's parent section
  (what ingest's parent expansion returns), for the generator.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from langchain_core.documents import Document

from ragingest.chunk import Chunk
from ragingest.loaders.markdown.pages import normalize_documents
from ragingest.loaders.markdown.source_offsets import indexed_text, to_source
from ragingest.splitters.base import ChunkSplitter
from ragingest.splitters.chunk_metadata import breadcrumb_title, chunk_metadata

PARENT_TEXT = "parent_text"  # for_vectorstore(parents=True): the parent section's exact text


def chunked(
    splitter: ChunkSplitter, documents: Iterable[Document]
) -> Iterator[tuple[dict[str, object], list[Chunk], str]]:
    """(metadata, chunks, the text their offsets index) per normalized document."""
    for document in normalize_documents(documents):
        base = dict(document.metadata)
        chunks = splitter.split_chunks(document.page_content, title=breadcrumb_title(base))
        base, chunks = to_source(base, chunks)
        yield base, chunks, indexed_text(document.page_content, base)


def vectorstore_documents(
    splitter: ChunkSplitter, documents: Iterable[Document], parents: bool = False
) -> list[Document]:
    """The chunks as a vector store should embed them (module docstring)."""
    out: list[Document] = []
    for base, chunks, indexed in chunked(splitter, documents):
        for index, chunk in enumerate(chunks):
            metadata: dict[str, Any] = chunk_metadata(base, chunk, index, len(chunks))
            if parents:
                metadata[PARENT_TEXT] = indexed[slice(*chunk.parent_span)]
            out.append(Document(page_content=chunk.embed_text, metadata=metadata))
    return out
