"""The Chroma collection: persistent, cosine space, and bound to one model and one splitter setup.

Contract: ``open_store`` returns a LangChain ``Chroma`` over the named collection. A new
collection records the model name, the model fingerprint and the splitter settings in its
metadata; opening an existing one with another model (or, for writing, other settings) raises
``CollectionMismatchError`` saying what differs and what to do.

A collection name resolves through the alias table of the records database
(``ragingest.vectorstore.records``: SQLite beside Chroma by default, else ``records_url`` /
``$RAGINGEST_RECORDS_URL``): after ``ingest --rebuild`` the name is served by another physical
Chroma collection (``NAME__2``, ...). ``open_store`` and ``query`` follow it; code that talks to
``chromadb`` directly should call ``resolve_collection`` first.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from langchain_chroma import Chroma
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from ragingest.errors import CollectionMismatchError
from ragingest.vectorstore.aliases import resolve_collection
from ragingest.vectorstore.embeddings import SentenceTransformerEmbeddings

MODEL_KEY = "ragingest_model"
FINGERPRINT_KEY = "ragingest_fingerprint"
SETTINGS_KEY = "ragingest_settings"
ALIAS_KEY = "ragingest_alias"  # on a rebuilt physical collection: the name it serves

Journal = Callable[[list[str], str], None]
PAGE = 1000  # ids per chromadb get


class ChunkStore(Chroma):
    """``Chroma`` that can embed another text than it stores, and keeps the parent docstore.

    ``langchain_chroma.Chroma`` embeds exactly what it stores; the breadcrumb must reach the
    model without changing the stored text that offsets refer to. So ``add_documents`` takes,
    besides LangChain's ``ids``, the keyword-only ``embed_texts`` (what the model embeds,
    default the documents' text), ``parent_texts`` (each chunk's parent section, written to
    ``parent_store``) and ``vectors`` (precomputed by an engine; ``None`` where the store must
    embed; given vectors enter the embedding cache when the embedding function is one).

    ``journal`` (set by the run's writer) is called with the ids and "add"/"delete" before
    Chroma is written, so a killed run's half-done writes can be found and finished;
    ``delete(ids, journal=False)`` is the recovery's delete of ids already journaled.
    """

    journal: Journal | None = None
    parent_store: Any = None  # ragingest.vectorstore.parents.ParentStore, set by open_store

    def __init__(self, *, collection_name: str, client: Any, **kwargs: Any) -> None:
        super().__init__(collection_name=collection_name, client=client, **kwargs)
        self.chroma_client = client
        self.physical_name = collection_name

    @property
    def collection(self) -> Any:
        """The chromadb collection, through chromadb's public client API."""
        return self.chroma_client.get_collection(self.physical_name)

    def count(self) -> int:
        return self.collection.count()

    def ids(self) -> list[str]:
        return list(self.collection.get(include=[])["ids"])

    def add_documents(
        self,
        documents: list[Document],
        *,
        embed_texts: Sequence[str] | None = None,
        parent_texts: Sequence[str] | None = None,
        vectors: Sequence[list[float] | None] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        ids = list(kwargs.get("ids") or [doc.id for doc in documents])
        if not documents:
            return ids
        texts = list(embed_texts or [doc.page_content for doc in documents])
        found = list(vectors or [None] * len(documents))
        given = [(t, v) for t, v in zip(texts, found, strict=True) if v is not None]
        if given and hasattr(self.embeddings, "store_vectors"):
            self.embeddings.store_vectors(given)
        todo = [t for t, v in zip(texts, found, strict=True) if v is None]
        computed = iter(self.embeddings.embed_documents(todo) if todo else [])
        embedded = [v if v is not None else next(computed) for v in found]
        if self.journal is not None:
            self.journal(ids, "add")
        if self.parent_store is not None and parent_texts is not None:
            from ragingest.vectorstore.parents import parent_documents

            parents = parent_documents(documents, parent_texts)
            if parents:
                self.parent_store.mset(parents)
        collection = self.collection
        step = self.chroma_client.get_max_batch_size()
        for i in range(0, len(ids), step):
            collection.upsert(
                ids=ids[i : i + step],
                embeddings=embedded[i : i + step],
                metadatas=[_stored(doc.metadata) for doc in documents[i : i + step]],
                documents=[doc.page_content for doc in documents[i : i + step]],
            )
        return ids

    def delete(self, ids: list[str] | None = None, *, journal: bool = True, **kwargs: Any) -> None:
        """Delete chunks by id, and the parent sections no remaining chunk refers to."""
        if ids and journal and self.journal is not None:
            self.journal(list(ids), "delete")
        parents = self._parent_ids(ids) if ids and self.parent_store is not None else set()
        super().delete(ids, **kwargs)
        if parents:
            self.parent_store.mdelete(sorted(parents - self._parent_ids(among=parents)))

    def prune_parents(self) -> int:
        """Delete every parent section no chunk of the collection refers to (a full pass, for
        repairs); returns how many went."""
        if self.parent_store is None:
            return 0
        return self.parent_store.prune(self._parent_ids())

    def _parent_ids(self, ids: list[str] | None = None, among: set[str] | None = None) -> set[str]:
        """The parent ids of the chunks ``ids`` (all chunks when None), or which of the
        parent ids ``among`` chunks still refer to."""
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
        collection = self.collection
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


def chroma_client(persist_dir: str | Path) -> Any:
    """The embedded client of ``persist_dir``, or an ``HttpClient`` inside ``use_server``
    (``ragingest.vectorstore.server``)."""
    import chromadb
    from chromadb.config import Settings

    from ragingest.vectorstore.server import active_server

    server = active_server()
    if server is not None:
        return server.client()

    return chromadb.PersistentClient(
        path=str(persist_dir), settings=Settings(anonymized_telemetry=False)
    )


def collection_metadata(client: Any, collection: str) -> dict[str, Any] | None:
    """The collection's metadata, or ``None`` when it does not exist."""
    try:
        return dict(client.get_collection(collection).metadata or {})
    except Exception:
        return None


def model_identity(model: str | None = None) -> tuple[str, str]:
    """``(name, fingerprint)`` of a model without loading its tokenizer or weights (the same
    values as ``load_model_info``), so a run with nothing to embed never loads the model."""
    from ragingest.vectorstore.models import canonical_name, model_fingerprint, resolve_model_path

    name = canonical_name(model)
    folder = Path(resolve_model_path(name))
    return name, model_fingerprint(name, folder) if folder.is_dir() else name


def embeddings_identity(embeddings: Embeddings) -> tuple[str, str]:
    """``(name, fingerprint)`` of ``SentenceTransformerEmbeddings`` or of an object carrying
    ``model_name`` and ``fingerprint`` (the run's cached embeddings)."""
    if hasattr(embeddings, "fingerprint"):
        return embeddings.model_name, embeddings.fingerprint  # type: ignore[attr-defined]
    info = embeddings.info  # type: ignore[attr-defined]
    return info.name, info.fingerprint


def store_metadata(
    model: str, fingerprint: str, settings: dict[str, Any] | None, alias: str | None = None
) -> dict[str, Any]:
    metadata = {
        "hnsw:space": "cosine",
        MODEL_KEY: model,
        FINGERPRINT_KEY: fingerprint,
        SETTINGS_KEY: json.dumps(settings or {}, sort_keys=True),
    }
    if alias:
        metadata[ALIAS_KEY] = alias
    return metadata


def open_store(
    persist_dir: str | Path,
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
) -> ChunkStore:
    """Open (or create) ``collection`` in ``persist_dir``, refusing a model/settings mismatch.

    ``model=None`` on an existing collection means "the model it was built with".
    ``resolve=False`` opens the physical collection ``collection`` as named (the ingest
    pipeline, which resolved it itself); ``alias`` is recorded on a new physical collection
    built for that name. ``records_url``: the records database holding the alias (default:
    ``$RAGINGEST_RECORDS_URL``, else the SQLite file in ``persist_dir``).
    """
    client = client or chroma_client(persist_dir)
    physical = resolve_collection(persist_dir, collection, records_url) if resolve else collection
    existing = collection_metadata(client, physical)
    if existing is None and not create:
        raise CollectionMismatchError(
            f"collection {collection!r} does not exist in {persist_dir}; "
            "run `ragingest ingest` first"
        )
    if embeddings is None:
        recorded = (existing or {}).get(MODEL_KEY)
        embeddings = SentenceTransformerEmbeddings(model or recorded)
    name, fingerprint = embeddings_identity(embeddings)
    if existing is not None:
        check_compatible(existing, collection, name, fingerprint, settings)
    store = ChunkStore(
        collection_name=physical,
        embedding_function=embeddings,
        client=client,
        collection_metadata=(
            store_metadata(name, fingerprint, settings, alias) if existing is None else None
        ),
    )
    from ragingest.vectorstore.parents import ParentStore

    store.parent_store = ParentStore(persist_dir, physical)
    return store


def mismatch(
    existing: dict[str, Any],
    collection: str,
    model: str,
    fingerprint: str,
    settings: dict[str, Any] | None,
) -> str | None:
    """Why a collection with metadata ``existing`` can't take this model/settings, or None."""
    recorded_model = existing.get(MODEL_KEY)
    if recorded_model and (recorded_model != model or existing.get(FINGERPRINT_KEY) != fingerprint):
        return (
            f"collection {collection!r} was built with model {recorded_model!r} "
            f"(fingerprint {existing.get(FINGERPRINT_KEY)}), not {model!r} ({fingerprint}); "
            "vectors of two models can't be compared. Use the same --model, another "
            "--collection, or `ingest --rebuild` to rebuild it"
        )
    recorded_settings = existing.get(SETTINGS_KEY)
    if settings is not None and recorded_settings:
        old = json.loads(recorded_settings)
        if old and old != settings:
            changed = sorted(k for k in set(old) | set(settings) if old.get(k) != settings.get(k))
            diff = ", ".join(f"{k}: {old.get(k)!r} -> {settings.get(k)!r}" for k in changed)
            return (
                f"collection {collection!r} was built with other splitter settings ({diff}); "
                "mixing them leaves chunks of two kinds. Use the recorded settings, another "
                "--collection, or `ingest --rebuild` to rebuild it"
            )
    return None


def check_compatible(
    existing: dict[str, Any],
    collection: str,
    model: str,
    fingerprint: str,
    settings: dict[str, Any] | None,
) -> None:
    problem = mismatch(existing, collection, model, fingerprint, settings)
    if problem:
        raise CollectionMismatchError(problem)
