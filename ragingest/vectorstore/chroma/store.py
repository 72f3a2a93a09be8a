"""The Chroma collection: persistent, cosine space, and bound to one model and one splitter setup.

Contract: ``open_store`` returns a LangChain ``Chroma`` over the named collection. A new
collection records the model name, the model fingerprint and the splitter settings in its
metadata; opening an existing one with another model (or, for writing, other settings) raises
``CollectionMismatchError`` saying what differs and what to do.

A collection name resolves through the alias table of the records database
(``ragingest.vectorstore.records.database``: SQLite beside Chroma by default, else ``records_url`` /
``$RAGINGEST_RECORDS_URL``): after ``ingest --rebuild`` the name is served by another physical
Chroma collection (``NAME__2``, ...). ``open_store`` and ``query`` follow it; code that talks to
``chromadb`` directly should call ``resolve_collection`` first.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from ragingest.models.embeddings import SentenceTransformerEmbeddings
from ragingest.vectorstore.access.principals import Access, access_filter, principals_required
from ragingest.vectorstore.access.write import chunk_access, parent_access, stored_access
from ragingest.vectorstore.chroma.backend import INDEX_SETTINGS
from ragingest.vectorstore.chroma.collection_info import (
    ACCESS_POLICY_KEY,
    ALIAS_KEY,
    FINGERPRINT_KEY,
    MODEL_KEY,
    SETTINGS_KEY,
    check_compatible,
    chroma_client,
    collection_metadata,
    embeddings_identity,
    mismatch,
    missing_collection,
    model_identity,
    require_store_dir,
    store_metadata,
)
from ragingest.vectorstore.chroma.guarded import GuardedClient
from ragingest.vectorstore.chroma.langchain import Chroma
from ragingest.vectorstore.chroma.names import chroma_name
from ragingest.vectorstore.chroma.reader import ChromaReads, to_chroma
from ragingest.vectorstore.gate import ReadGate, read_gate
from ragingest.vectorstore.ids import chroma_id
from ragingest.vectorstore.lexical.index import lexical_text
from ragingest.vectorstore.records.aliases import resolve_collection
from ragingest.vectorstore.seam import ParentSource

if TYPE_CHECKING:  # the types only: the parents database is opened by open_store
    from ragingest.vectorstore.chroma.server import ChromaServer
    from ragingest.vectorstore.records.parents import ParentStore

__all__ = [  # the collection_info names stay importable from here
    "ALIAS_KEY",
    "FINGERPRINT_KEY",
    "MODEL_KEY",
    "SETTINGS_KEY",
    "ChunkStore",
    "check_compatible",
    "chroma_client",
    "collection_metadata",
    "embeddings_identity",
    "mismatch",
    "model_identity",
    "open_store",
    "require_store_dir",
    "store_metadata",
]

log = logging.getLogger(__name__)


Journal = Callable[[list[str], str], None]
PAGE = 1000  # ids per chromadb get


class ChunkStore(ChromaReads, Chroma):
    """``Chroma`` that can embed another text than it stores, and keeps the parent docstore
    and the lexical index (``ragingest.vectorstore.lexical.index``) in step with Chroma; a
    ``seam.ChunkSource`` (its reads: ``reader.ChromaReads``) and a ``seam.ChunkSink``.

    ``langchain_chroma.Chroma`` embeds exactly what it stores; the breadcrumb must reach the
    model without changing the stored text that offsets refer to. So ``add_documents`` takes,
    besides LangChain's ``ids``, the keyword-only ``embed_texts`` (what the model embeds,
    default the documents' text), ``parent_texts`` (each chunk's parent section, written to
    ``parent_store``) and ``vectors`` (precomputed by an engine; ``None`` where the store must
    embed; given vectors enter the embedding cache when the embedding function is one).

    ``journal`` (set by the run's writer) is called with the ids and "add"/"delete" before
    Chroma is written, so a killed run's half-done writes can be found and finished;
    ``delete(ids, journal=False)`` is the recovery's delete of ids already journaled.

    Every write goes to Chroma first, then to the lexical index, through ``add_documents``,
    ``delete`` and ``delete_collection``. A kill between the two leaves ids in Chroma only
    (an add) or in the index only (a delete); the journal's recovery deletes them through
    ``delete``, and the first write of a store that finds the counts apart makes the index
    hold exactly Chroma's ids again (``sync_lexical``), so it converges. A Document without
    an id gets ``ids.chroma_id`` (its content hash).
    """

    journal: Journal | None = None
    _parents: ParentStore | None = None  # set by open_store (``parent_store``)
    _lexical: Any = None  # a LexicalIndex or PgLexicalIndex, set by open_store (``lexical``)
    gate: ReadGate | None = None  # readers see a write group whole (set by open_store)
    _lexical_synced: bool = False
    _query_handle: Any = None  # the chromadb collection the reads go to (``_handle``)

    def __init__(
        self,
        *,
        collection_name: str,
        client: Any,
        reads: GuardedClient | None = None,
        guard_seam: bool = False,
        principals: Access = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(collection_name=collection_name, client=reads or client, **kwargs)
        self.chroma_client = client  # writes and upkeep: every chunk
        self.physical_name = collection_name
        self._reads = reads if guard_seam else None
        self._principals = principals if guard_seam and reads is not None else None

    @property
    def collection(self) -> Any:
        """The chromadb collection, through chromadb's public client API; on a store opened
        for principals (``open_store(principals=...)``) the guarded one, whose reads admit
        only what they may read (``chroma.guarded``)."""
        if self._reads is not None:
            return self._reads.get_collection(self.physical_name)
        return self._chroma()

    def _chroma(self) -> Any:
        """The chromadb collection itself: every chunk (the store's writes and upkeep)."""
        return self.chroma_client.get_collection(self.physical_name)

    @property
    def parent_store(self) -> ParentSource | None:
        """The parent sections beside Chroma; on a store opened for principals only those
        whose own ``access`` admits them (``guarded_indexes.GuardedParents``, read-only)."""
        if self._parents is None or self._principals is None:
            return self._parents
        from ragingest.vectorstore.access.guarded_indexes import GuardedParents

        access = access_filter(self._principals, policy=True)
        return self._parents if access is None else GuardedParents(self._parents, access)

    @parent_store.setter
    def parent_store(self, parents: ParentStore | None) -> None:
        self._parents = parents

    @property
    def lexical(self) -> Any:
        """The lexical index; on a store opened for principals one that returns only the ids
        they may read (``guarded_indexes.GuardedLexical``, read-only)."""
        if self._lexical is None or self._principals is None:
            return self._lexical
        from ragingest.vectorstore.access.guarded import GuardedSource
        from ragingest.vectorstore.access.guarded_indexes import GuardedLexical

        return GuardedLexical(self._lexical, GuardedSource(self, self._principals))

    @lexical.setter
    def lexical(self, index: Any) -> None:
        self._lexical = index

    def _handle(self) -> Any:
        """The chromadb collection the reads go to, fetched once (as langchain_chroma keeps
        one) and again after ``delete_collection``."""
        if self._query_handle is None:
            reads = self._reads  # a reader's store: its seam reads are guarded too
            handle = self._chroma() if reads is None else reads.get_collection(self.physical_name)
            self._query_handle = handle
        return self._query_handle

    def ids(self) -> list[str]:
        """The ids of every chunk in the collection."""
        return self.chunk_ids()

    def add_documents(
        self,
        documents: list[Document],
        *,
        embed_texts: Sequence[str] | None = None,
        parent_texts: Sequence[str] | None = None,
        vectors: Sequence[list[float] | None] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        """Store ``documents`` (their ids from ``ids``, the document or the content); vectors of
        ``embed_texts`` (default: the contents) unless given in ``vectors``, parent texts and
        the lexical index kept in step. Returns the ids."""
        ids = list(kwargs.get("ids") or [doc.id or chroma_id(doc) for doc in documents])
        if not documents:
            return ids
        texts = list(embed_texts or [doc.page_content for doc in documents])
        found = list(vectors or [None] * len(documents))
        given = [(t, v) for t, v in zip(texts, found, strict=True) if v is not None]
        embeddings = self.embeddings
        if embeddings is None:
            raise ValueError("the store has no embedding function to embed the documents with")
        if given and hasattr(embeddings, "store_vectors"):
            embeddings.store_vectors(given)
        todo = [t for t, v in zip(texts, found, strict=True) if v is None]
        computed = iter(embeddings.embed_documents(todo) if todo else [])
        embedded = [v if v is not None else next(computed) for v in found]
        with self._writing():  # readers see the write whole; their kept id sets drop
            self._sync_before_write()
            if self.journal is not None:
                self.journal(ids, "add")
            if self._parents is not None and parent_texts is not None:
                from ragingest.vectorstore.records.parents import parent_documents

                parents = parent_documents(documents, parent_texts)
                if parents:
                    self._parents.mset(parents)
            collection = self._chroma()
            step = self.chroma_client.get_max_batch_size()
            for i in range(0, len(ids), step):
                collection.upsert(
                    ids=ids[i : i + step],
                    embeddings=embedded[i : i + step],
                    metadatas=[_stored(doc.metadata) for doc in documents[i : i + step]],
                    documents=[doc.page_content for doc in documents[i : i + step]],
                )
            if self._lexical is not None:
                stored = [lexical_text(d.page_content, _stored(d.metadata)) for d in documents]
                self._lexical.add(ids, stored)
        return ids

    def delete(self, ids: list[str] | None = None, *, journal: bool = True, **kwargs: Any) -> None:
        """Delete chunks by id (or what ``where=`` matches) from Chroma and the lexical
        index, and the parent sections no remaining chunk refers to."""
        if ids is None and kwargs.get("where"):
            ids = list(self._chroma().get(where=kwargs.pop("where"), include=[])["ids"])
        if not ids:
            return
        with self._writing():
            self._sync_before_write()
            if journal and self.journal is not None:
                self.journal(list(ids), "delete")
            parents = self._parent_ids(ids) if self._parents is not None else set()
            super().delete(ids, **kwargs)
            if self._lexical is not None:
                self._lexical.delete(ids)
            if parents and self._parents is not None:
                self._parents.mdelete(sorted(parents - self._parent_ids(among=parents)))

    def set_access(self, ids: Sequence[str], access: Sequence[str]) -> None:
        """Replace the readers (``schema.ACCESS_KEY``) of the chunks ``ids`` and of their
        parent sections in place (``access_write``): no text or vector changes."""
        ids = list(ids)
        if not ids:
            return
        value = stored_access(access)
        with self._writing():
            parents = self._parent_ids(ids) if self._parents is not None else set()
            chunk_access(self._chroma(), ids, value, self.chroma_client.get_max_batch_size())
            if parents and self._parents is not None:
                parent_access(self._parents, sorted(parents), value)

    def _writing(self) -> contextlib.AbstractContextManager[None]:
        """The read gate held exclusively (re-entrant: the writer may hold it already)."""
        return self.gate.writing() if self.gate is not None else contextlib.nullcontext()

    def delete_collection(self) -> None:
        """Drop the collection and its lexical index."""
        super().delete_collection()
        self._query_handle = None
        if self._lexical is not None:
            self._lexical.drop()

    def sync_lexical(self, prune: bool = True) -> int:
        """Make the lexical index hold Chroma's ids: index what it lacks (from Chroma's stored
        text) and, with ``prune``, drop ids Chroma no longer has. Returns how many changed.

        Safe beside a running writer: the index is read before Chroma, and a writer adds to
        Chroma first and deletes from it first, so an id in the index that Chroma lacks at the
        later read is really gone."""
        if self._lexical is None:
            return 0
        indexed = self._lexical.ids()
        in_chroma = set(self.ids())
        extra = sorted(indexed - in_chroma) if prune else []
        missing = sorted(in_chroma - indexed)
        self._lexical.delete(extra)
        collection = self._chroma()
        for i in range(0, len(missing), PAGE):
            got = collection.get(ids=missing[i : i + PAGE], include=["documents", "metadatas"])
            pairs = zip(got["documents"], got["metadatas"], strict=True)
            self._lexical.add(got["ids"], [lexical_text(t or "", m) for t, m in pairs])
        return len(extra) + len(missing)

    def _sync_before_write(self) -> None:
        """Once per store: a run killed between Chroma and the lexical index left them apart."""
        if self._lexical_synced or self._lexical is None:
            return
        self._lexical_synced = True
        if not self.lexical_in_step():
            changed = self.sync_lexical()
            log.warning("lexical index brought in step with Chroma: %d chunks", changed)

    def prune_parents(self) -> int:
        """Delete every parent section no chunk of the collection refers to (a full pass, for
        repairs); returns how many went."""
        if self._parents is None:
            return 0
        return self._parents.prune(self._parent_ids())

    def _parent_ids(self, ids: list[str] | None = None, among: set[str] | None = None) -> set[str]:
        """The parent ids of the chunks ``ids`` (all chunks when None), or which of the
        parent ids ``among`` chunks still refer to."""
        queries: list[dict[str, Any]]
        if among is not None:
            names = sorted(among)
            queries = [
                {"where": {"parent_id": {"$in": names[i : i + PAGE]}}}
                for i in range(0, len(names), PAGE)
            ]
        elif ids is not None:
            queries = [{"ids": ids[i : i + PAGE]} for i in range(0, len(ids), PAGE)]
        else:
            queries = [{}]
        found: set[str] = set()
        collection = self._chroma()
        for query in queries:
            offset = 0
            while True:
                got = collection.get(include=["metadatas"], limit=PAGE, offset=offset, **query)
                metadatas = got["metadatas"] or []
                found.update(str(m["parent_id"]) for m in metadatas if m and "parent_id" in m)
                if len(metadatas) < PAGE:
                    break
                offset += PAGE
        return found


def _stored(metadata: dict[str, Any]) -> dict[str, Any]:
    """What Chroma keeps of a document's metadata: no underscore keys (a loader's hints,
    ``schema.LOADER_HINTS``, on a Document a LangChain app adds itself)."""
    return {k: v for k, v in metadata.items() if not k.startswith("_")}


def open_store(
    persist_dir: str | Path | None,
    collection: str,
    embeddings: Embeddings | None = None,
    *,
    model: str | None = None,
    settings: dict[str, Any] | None = None,
    create: bool = True,
    client: Any = None,
    resolve: bool = True,
    alias: str | None = None,
    records_url: str | None = None,
    server: ChromaServer | None = None,
    principals: Access = None,
) -> ChunkStore:
    """Open (or create) ``collection`` in ``persist_dir``, refusing a model/settings mismatch.

    ``model=None`` on an existing collection means "the model it was built with".
    ``resolve=False`` opens the physical collection ``collection`` as named (the ingest
    pipeline, which resolved it itself); ``alias`` is recorded on a new physical collection
    built for that name. ``records_url``: the records database holding the alias (default:
    ``$RAGINGEST_RECORDS_URL``, else the SQLite file in ``persist_dir``); when it is
    PostgreSQL it also holds the parent sections and the lexical index. ``server``: a Chroma
    server (``server.ChromaServer``, as ``ingest --chroma-host``); without it the server of an
    enclosing ``server.use_server``, else the embedded directory.
    ``persist_dir`` may be None with a server and a PostgreSQL records database.

    ``principals`` (``access.Principals`` or ``ALL``): every read of the store, LangChain's
    (``as_retriever``, ``similarity_search*``, ``max_marginal_relevance_search*``, ``get``,
    ``get_by_ids``) and the seam's, admits only what they may read (``chroma.guarded``).
    Without them (the writer's open) the seam's reads see every chunk, and on a collection
    with an access policy LangChain's reads raise ``PrincipalsRequiredError``.
    """
    from ragingest.vectorstore.chroma.server import active_server
    from ragingest.vectorstore.lexical.location import drop_orphan_indexes, lexical_index

    server = server or active_server()
    if client is None and server is None:
        if persist_dir is None:
            raise ValueError("give persist_dir (the Chroma directory) or a Chroma server")
        if not create:
            require_store_dir(persist_dir)
    client = client or (server.client() if server is not None else chroma_client(persist_dir))
    physical = resolve_collection(persist_dir, collection, records_url) if resolve else collection
    existing = collection_metadata(client, physical)
    if existing is None and resolve and physical != chroma_name(collection):  # being settled
        physical = chroma_name(collection)  # under its own name already (``pipeline.settle``)
        existing = collection_metadata(client, physical)
    if existing is None and not create:
        raise missing_collection(collection, persist_dir or server)
    if embeddings is None:
        recorded = (existing or {}).get(MODEL_KEY)
        embeddings = SentenceTransformerEmbeddings(model or recorded)
    name, fingerprint = embeddings_identity(embeddings)
    if existing is not None:
        check_compatible(existing, collection, name, fingerprint, settings)
    fresh = store_metadata(name, fingerprint, settings, alias) if existing is None else None
    policy = bool((existing or fresh or {}).get(ACCESS_POLICY_KEY))
    refuse = principals_required if principals is None and policy else None
    access = to_chroma(access_filter(principals, policy)) if principals is not None else None
    store = ChunkStore(
        collection_name=physical,
        embedding_function=embeddings,
        client=client,
        reads=GuardedClient(client, access, refuse) if access or refuse else None,
        guard_seam=principals is not None,
        principals=principals,
        collection_metadata=None if fresh is None else {**INDEX_SETTINGS, **fresh},
    )
    from ragingest.vectorstore.records.parents import ParentStore

    store.parent_store = ParentStore(persist_dir, physical, records_url)
    store.lexical = lexical_index(persist_dir, physical, records_url)
    store.gate = read_gate(persist_dir, physical, records_url)
    drop_orphan_indexes(
        persist_dir, records_url, lambda: {getattr(c, "name", c) for c in client.list_collections()}
    )
    return store
