"""A read-only view of a collection for one-shot searches (``ragingest query``), straight on
chromadb: importing ``langchain_chroma`` (LangChain runnables, tracers, langsmith) costs
~0.4 s of a cold start that only reads.

Contract: ``open_reader(persist_dir, collection, ...)`` opens an existing collection exactly as
``open_store(..., create=False)`` does (the same refusals: no store directory, no collection, a
model mismatch; the alias followed; orphaned lexical indexes dropped) and returns a
``ChunkReader``, the reads of ``seam.ChunkSource`` (``ChromaReads``, which ``ChunkStore``
shares: the same collection calls, rows built the same way). It writes nothing: a lexical
index out of step with Chroma needs ``open_store``'s
``sync_lexical``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragingest.models.encoder import ModelEncoder
from ragingest.vectorstore.chroma.collection_info import (
    ACCESS_POLICY_KEY,
    MODEL_KEY,
    check_compatible,
    chroma_client,
    collection_metadata,
    embeddings_identity,
    is_remote,
    missing_collection,
    require_store_dir,
)
from ragingest.vectorstore.chroma.index import to_chroma
from ragingest.vectorstore.chroma.names import chroma_name
from ragingest.vectorstore.gate import ReadGate
from ragingest.vectorstore.records.location import resolve_in_default_file
from ragingest.vectorstore.seam import (
    Filter,
    LexicalSearch,
    ParentSource,
    StoredChunk,
)


class ChromaReads:
    """The reads of ``seam.ChunkSource`` over one chromadb collection (``_handle``), shared by
    ``ChunkReader`` and ``store.ChunkStore``."""

    def _handle(self) -> Any:
        raise NotImplementedError  # the chromadb collection

    def count(self) -> int:
        """The number of chunks in the collection."""
        return int(self._handle().count())

    def nearest(
        self, vector: Sequence[float], n: int, where: Filter | None = None
    ) -> list[tuple[str, float]]:
        """The ``n`` nearest as ``(id, cosine distance)``, nearest first: Chroma asked for the
        distances alone (converting texts and metadata costs more than the search)."""
        found = self._handle().query(
            query_embeddings=[list(vector)], n_results=n, where=to_chroma(where),
            include=["distances"],
        )  # fmt: skip
        pairs = zip(found["ids"][0], found["distances"][0], strict=True)
        return [(str(i), float(d)) for i, d in pairs]

    def nearest_chunks(
        self, vector: Sequence[float], n: int, where: Filter | None = None
    ) -> list[tuple[StoredChunk, float]]:
        """The ``n`` nearest with their chunks, nearest first; one stored without text is left
        out (as ``langchain_chroma.Chroma``'s search leaves it)."""
        found = self._handle().query(
            query_embeddings=[list(vector)], n_results=n, where=to_chroma(where),
            include=["documents", "metadatas", "distances"],
        )  # fmt: skip
        rows = zip(
            found["ids"][0], found["documents"][0], found["metadatas"][0], found["distances"][0],
            strict=False,
        )  # fmt: skip
        return [
            (StoredChunk(str(i), text, dict(meta or {})), float(distance))
            for i, text, meta, distance in rows
            if text is not None
        ]

    def chunks(
        self, ids: Sequence[str] | None = None, where: Filter | None = None
    ) -> list[StoredChunk]:
        """The chunks among ``ids`` (None: all) that ``where`` admits; ids not stored are
        absent."""
        got = self._handle().get(
            ids=None if ids is None else list(ids), where=to_chroma(where),
            include=["documents", "metadatas"],
        )  # fmt: skip
        rows = zip(got["ids"], got["documents"], got["metadatas"], strict=True)
        return [StoredChunk(str(i), text, dict(meta or {})) for i, text, meta in rows]

    def held(self, ids: Sequence[str], where: Filter | None = None) -> set[str]:
        """Which of ``ids`` are stored and admitted by ``where``."""
        if not ids:
            return set()
        got = self._handle().get(ids=list(ids), where=to_chroma(where), include=[])
        return {str(i) for i in got["ids"]}

    def chunk_ids(self, where: Filter | None = None) -> list[str]:
        """The ids of every chunk ``where`` admits."""
        got = self._handle().get(where=to_chroma(where), include=[])
        return [str(i) for i in got["ids"]]

    def vectors(
        self, ids: Sequence[str], where: Filter | None = None
    ) -> dict[str, list[float]]:
        """The stored embeddings of the ``ids`` that ``where`` admits."""
        if not ids:
            return {}
        got = self._handle().get(ids=list(ids), where=to_chroma(where), include=["embeddings"])
        return {str(i): list(v) for i, v in zip(got["ids"], got["embeddings"], strict=True)}

    def access_policy(self) -> bool:
        """Whether the collection was written under an access policy (its marker)."""
        return bool((self._handle().metadata or {}).get(ACCESS_POLICY_KEY))

    @property
    def remote(self) -> bool:
        """Whether the client talks to a Chroma server (each call a round trip)."""
        return is_remote(self.chroma_client)

    @property
    def chunks_with_dense(self) -> bool:
        """On a server: the chunks come in the dense search's call instead of one more."""
        return self.remote

    def embed_query(self, text: str) -> list[float]:
        """The query's vector, by the collection's model."""
        if self.embeddings is None:
            raise ValueError("the store was opened without a model to embed a query with")
        return list(self.embeddings.embed_query(text))

    def lexical_in_step(self) -> bool:
        """Whether the lexical index holds as many chunks as the collection (True without one)."""
        return self.lexical is None or self.lexical.count() == self.count()

    chroma_client: Any
    embeddings: Any  # the model's LangChain ``Embeddings`` (None: counts and ids only)
    lexical: Any  # the lexical index, or None


class ChunkReader(ChromaReads):
    """Read-only ``seam.ChunkSource`` over one physical collection (module docstring);
    without ``embeddings`` it can't embed a query (``ragingest status`` counts and lists)."""

    gate: ReadGate | None = None  # set by open_reader
    parent_store: ParentSource | None = None

    def __init__(
        self,
        client: Any,
        physical: str,
        embeddings: Any = None,
        lexical: LexicalSearch | None = None,
    ) -> None:
        self.chroma_client = client
        self.physical_name = physical
        self.embeddings = embeddings
        self.lexical = lexical
        self.collection = client.get_collection(physical)

    def _handle(self) -> Any:
        return self.collection


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
    from ragingest.vectorstore.chroma.server import active_server
    from ragingest.vectorstore.gate import read_gate
    from ragingest.vectorstore.lexical.location import drop_orphan_indexes, lexical_index

    server = server or active_server()
    if server is None:
        if persist_dir is None:
            raise ValueError("give --persist-dir (the Chroma directory) or a Chroma server")
        require_store_dir(persist_dir)
    client = server.client() if server is not None else chroma_client(persist_dir)
    physical = resolve_in_default_file(persist_dir, collection, records_url)
    if physical is None:  # another records database: through SQLAlchemy
        from ragingest.vectorstore.records.aliases import resolve_collection

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
