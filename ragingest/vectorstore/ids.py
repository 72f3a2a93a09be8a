"""One id scheme: a chunk's id is its Chroma id, and ``Document.id`` carries it.

The ingest writer's ids are ``schema.ChunkRecord.id`` (known from the split stage on:
``ChunkRecord.document()`` has it as ``Document.id``). A Document added to a ``ChunkStore``
without an id (an app adding its own) gets ``chroma_id(document)``: ``schema.content_id`` of its
text and metadata, the same scheme as ``ChunkRecord.id``, so re-adding the same Document
replaces it. Every Document
ragingest returns from the store has ``Document.id`` set, ``store.get_by_ids([id])`` finds
it, and a retriever result's ``metadata["chunk_ids"]`` lists Chroma ids as well.
"""

from __future__ import annotations

from langchain_core.documents import Document

from ragingest.schema import content_id


def chroma_id(document: Document) -> str:
    """The Chroma id of ``document`` as the ingest writer stores it (see the module doc)."""
    return content_id(document.page_content, dict(document.metadata or {}))

