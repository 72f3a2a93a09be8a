"""One id scheme: a chunk's id in the store is its content id, and ``Document.id`` carries it.

The ingest writer's ids are ``schema.ChunkRecord.id`` (known from the split stage on:
``ChunkRecord.document()`` has it as ``Document.id``). A Document added to a ``Collection``
without an id (an app adding its own) gets ``stored_id(document)``: ``schema.content_id`` of its
text and metadata, the same scheme as ``ChunkRecord.id``, so re-adding the same Document
replaces it. Every Document
ragingest returns from the store has ``Document.id`` set, ``store.get_by_ids([id])`` finds
it, and a retriever result's ``metadata["chunk_ids"]`` lists these ids as well.
"""

from __future__ import annotations

from langchain_core.documents import Document

from ragingest.schema import content_id


def stored_id(document: Document) -> str:
    """The id of ``document`` in the store, as the ingest writer stores it (module doc)."""
    return content_id(document.page_content, dict(document.metadata or {}))

