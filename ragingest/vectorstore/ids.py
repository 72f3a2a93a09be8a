"""One id scheme: a chunk's id is its Chroma id, and ``Document.id`` carries it.

The ingest writer's ids are ``schema.ChunkRecord.id`` (known from the split stage on:
``ChunkRecord.document()`` has it as ``Document.id``). A Document added to a ``ChunkStore``
without an id (an app adding its own) gets ``chroma_id(document)``: LangChain's ``index()``
key with ``key_encoder="sha256"`` (sha256 of the sha256 of the text and of the metadata as
sorted JSON, 64 hex digits), so re-adding the same Document replaces it. Every Document
ragingest returns from the store has ``Document.id`` set, ``store.get_by_ids([id])`` finds
it, and a retriever result's ``metadata["chunk_ids"]`` lists Chroma ids as well.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

from langchain_core.documents import Document


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def chroma_id(document: Document) -> str:
    """The Chroma id of ``document`` as the ingest writer stores it (see the module doc)."""
    metadata = json.dumps(dict(document.metadata or {}), sort_keys=True)
    return _sha256(_sha256(document.page_content) + _sha256(metadata))


def with_ids(documents: Iterable[Document]) -> list[Document]:
    """The Documents with ``id`` set to their ``chroma_id`` where they had none."""
    return [
        doc if doc.id else doc.model_copy(update={"id": chroma_id(doc)}) for doc in documents
    ]
