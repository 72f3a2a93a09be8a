"""Names callers imported from here before the store port, kept importable: ``open_reader``
(``opening.open_reader``), ``to_chroma`` (``index.to_chroma``) and ``ChunkReader``, a
read-only ``collection_reads.CollectionReads`` over one chromadb collection of a client."""

from __future__ import annotations

from typing import Any

from ragingest.vectorstore.chroma.collection_info import is_remote
from ragingest.vectorstore.chroma.index import ChromaIndex, to_chroma
from ragingest.vectorstore.collection_reads import CollectionReads
from ragingest.vectorstore.opening import open_reader

__all__ = ["ChunkReader", "open_reader", "to_chroma"]


def ChunkReader(
    client: Any, physical: str, embeddings: Any = None, lexical: Any = None
) -> CollectionReads:
    """The collection ``physical`` of chromadb ``client``, read-only; without ``embeddings``
    it can't embed a query (counts and ids only)."""
    index = ChromaIndex(client.get_collection(physical), client.get_max_batch_size())
    return CollectionReads(index, embeddings, lexical=lexical, remote=is_remote(client))
