"""A read-only view of a collection for one-shot searches (``ragingest query``), straight on
chromadb: importing ``langchain_chroma`` (LangChain runnables, tracers, langsmith) costs
~0.4 s of a cold start that only reads.

Contract: ``open_reader(persist_dir, collection, ...)`` opens an existing collection exactly as
``open_store(..., create=False)`` does (the same refusals: no store directory, no collection, a
model mismatch; the alias followed; orphaned lexical indexes dropped) and returns a
``ChunkReader`` with the read methods ``search.rank_chunks`` uses for a similarity or hybrid
ranking. They give what ``ChunkStore`` gives: the same collection calls as
``langchain_chroma.Chroma`` and Documents built the same way (id = the Chroma id, None texts
skipped). It writes nothing: a lexical index out of step with Chroma needs ``open_store``'s
``sync_lexical``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.documents import Document

from ragingest.models.encoder import ModelEncoder
from ragingest.vectorstore.collection_info import (
    MODEL_KEY,
    check_compatible,
    chroma_client,
    collection_metadata,
    embeddings_identity,
    missing_collection,
    require_store_dir,
)
from ragingest.vectorstore.names import chroma_name
from ragingest.vectorstore.records_location import resolve_in_default_file


class ChunkReader:
    """Read-only ``embeddings``, ``lexical``, ``count``, ``lexical_in_step``, ``get`` and
    ``similarity_search_by_vector_with_relevance_scores`` of one physical collection."""

    gate: Any = None  # the collection's ``gate.ReadGate``, set by open_reader

    def __init__(self, client: Any, physical: str, embeddings: Any, lexical: Any) -> None:
        self.chroma_client = client
        self.physical_name = physical
        self.embeddings = embeddings
        self.lexical = lexical
        self.collection = client.get_collection(physical)

    def count(self) -> int:
        """The number of chunks in the collection."""
        return self.collection.count()

    def lexical_in_step(self) -> bool:
        """Whether the lexical index holds as many chunks as the collection."""
        return self.lexical.count() == self.count()

    def get(
        self,
        ids: str | list[str] | None = None,
        where: dict[str, Any] | None = None,
        limit: int | None = None,
        offset: int | None = None,
        where_document: dict[str, Any] | None = None,
        include: list[str] | None = None,
    ) -> dict[str, Any]:
        """Chroma's ``collection.get`` with these filters (ids, where, paging, include)."""
        kwargs: dict[str, Any] = {"ids": ids, "where": where, "limit": limit, "offset": offset}
        kwargs["where_document"] = where_document
        if include is not None:
            kwargs["include"] = include
        return self.collection.get(**kwargs)

    def nearest_ids(
        self, embedding: list[float], k: int, where: dict[str, Any] | None = None
    ) -> list[tuple[str, float]]:
        """The ``k`` nearest as ``(Chroma id, cosine distance)``, nearest first, without texts
        or metadata (``ChunkStore.nearest_ids``)."""
        return nearest(self.collection, embedding, k, where)

    def similarity_search_by_vector_with_relevance_scores(
        self,
        embedding: list[float],
        k: int = 4,
        filter: dict[str, Any] | None = None,
        where_document: dict[str, Any] | None = None,
    ) -> list[tuple[Document, float]]:
        """The ``k`` nearest as ``(Document, cosine distance)``, nearest first."""
        found = self.collection.query(
            query_embeddings=[embedding], n_results=k, where=filter, where_document=where_document
        )
        rows = zip(
            found["documents"][0], found["metadatas"][0], found["ids"][0], found["distances"][0],
            strict=False,
        )  # fmt: skip
        return [
            (Document(page_content=text, metadata=metadata or {}, id=chunk_id), distance)
            for text, metadata, chunk_id, distance in rows
            if text is not None
        ]


def nearest(
    collection: Any, embedding: list[float], k: int, where: dict[str, Any] | None = None
) -> list[tuple[str, float]]:
    """The ``k`` nearest of a chromadb ``collection`` as ``(id, distance)``, nearest first:
    Chroma asked for the distances alone."""
    found = collection.query(
        query_embeddings=[embedding], n_results=k, where=where, include=["distances"]
    )
    return [(str(i), float(d)) for i, d in zip(found["ids"][0], found["distances"][0], strict=True)]


def open_reader(
    persist_dir: str | Path | None,
    collection: str,
    *,
    model: str | None = None,
    records_url: str | None = None,
    server: Any = None,
) -> ChunkReader:
    """Open the existing ``collection`` read-only (see the module docstring); ``model=None``
    means the model it was built with. ``server``: a ``server.ChromaServer`` (default: the one
    of an enclosing ``use_server``, else the embedded ``persist_dir``)."""
    from ragingest.vectorstore.gate import read_gate
    from ragingest.vectorstore.lexical_location import drop_orphan_indexes, lexical_index
    from ragingest.vectorstore.server import active_server

    server = server or active_server()
    if server is None:
        if persist_dir is None:
            raise ValueError("give --persist-dir (the Chroma directory) or a Chroma server")
        require_store_dir(persist_dir)
    client = server.client() if server is not None else chroma_client(persist_dir)
    physical = resolve_in_default_file(persist_dir, collection, records_url)
    if physical is None:  # another records database: through SQLAlchemy
        from ragingest.vectorstore.aliases import resolve_collection

        physical = resolve_collection(persist_dir, collection, records_url)
    existing = collection_metadata(client, physical)
    if existing is None and physical != chroma_name(collection):  # a rebuild being settled
        physical = chroma_name(collection)  # under its own name already (``pipeline.settle``)
        existing = collection_metadata(client, physical)
    if existing is None:
        raise missing_collection(collection, persist_dir or server)
    embeddings = ModelEncoder(model or existing.get(MODEL_KEY))
    name, fingerprint = embeddings_identity(embeddings)
    check_compatible(existing, collection, name, fingerprint, None)
    drop_orphan_indexes(
        persist_dir, records_url, lambda: {getattr(c, "name", c) for c in client.list_collections()}
    )
    reader = ChunkReader(
        client, physical, embeddings, lexical_index(persist_dir, physical, records_url)
    )
    reader.gate = read_gate(persist_dir, physical, records_url)
    return reader
