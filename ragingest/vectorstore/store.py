"""The Chroma collection: persistent, cosine space, and bound to one model and one splitter setup.

Contract: ``open_store`` returns a LangChain ``Chroma`` over the named collection. A new
collection records the model name, the model fingerprint and the splitter settings in its
metadata; opening an existing one with another model (or, for writing, other settings) raises
``CollectionMismatchError`` saying what differs and what to do.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from langchain_chroma import Chroma
from langchain_core.documents import Document

from ragingest.errors import CollectionMismatchError
from ragingest.vectorstore.embeddings import SentenceTransformerEmbeddings

EMBED_KEY = "_embed_text"  # a Document's text to embed; never stored
MODEL_KEY = "ragingest_model"
FINGERPRINT_KEY = "ragingest_fingerprint"
SETTINGS_KEY = "ragingest_settings"


class ChunkStore(Chroma):
    """``Chroma`` that embeds a chunk's ``embed_text`` (breadcrumb + text) but stores its text.

    ``langchain_chroma.Chroma`` embeds exactly what it stores; the breadcrumb must reach the
    model without changing the stored text that offsets refer to.
    """

    def add_documents(self, documents: list[Document], **kwargs: Any) -> list[str]:
        ids = list(kwargs.get("ids") or [doc.id for doc in documents])
        if not documents:
            return ids
        to_embed = [doc.metadata.get(EMBED_KEY, doc.page_content) for doc in documents]
        vectors = self.embeddings.embed_documents(to_embed)
        metadatas = [
            {k: v for k, v in doc.metadata.items() if not k.startswith("_")} for doc in documents
        ]
        step = self._client.get_max_batch_size()
        for i in range(0, len(ids), step):
            self._collection.upsert(
                ids=ids[i : i + step],
                embeddings=vectors[i : i + step],
                metadatas=metadatas[i : i + step],
                documents=[doc.page_content for doc in documents[i : i + step]],
            )
        return ids


def chroma_client(persist_dir: str | Path) -> Any:
    import chromadb
    from chromadb.config import Settings

    return chromadb.PersistentClient(
        path=str(persist_dir), settings=Settings(anonymized_telemetry=False)
    )


def collection_metadata(client: Any, collection: str) -> dict[str, Any] | None:
    """The collection's metadata, or ``None`` when it does not exist."""
    try:
        return dict(client.get_collection(collection).metadata or {})
    except Exception:
        return None


def open_store(
    persist_dir: str | Path,
    collection: str,
    embeddings: SentenceTransformerEmbeddings | None = None,
    *,
    model: str | None = None,
    settings: dict[str, Any] | None = None,
    create: bool = True,
    client: Any = None,
) -> ChunkStore:
    """Open (or create) ``collection`` in ``persist_dir``, refusing a model/settings mismatch.

    ``model=None`` on an existing collection means "the model it was built with".
    """
    client = client or chroma_client(persist_dir)
    existing = collection_metadata(client, collection)
    if existing is None and not create:
        raise CollectionMismatchError(
            f"collection {collection!r} does not exist in {persist_dir}; "
            "run `ragingest ingest` first"
        )
    if embeddings is None:
        recorded = (existing or {}).get(MODEL_KEY)
        embeddings = SentenceTransformerEmbeddings(model or recorded)
    info = embeddings.info
    if existing is not None:
        check_compatible(existing, collection, info.name, info.fingerprint, settings)
    metadata = {
        "hnsw:space": "cosine",
        MODEL_KEY: info.name,
        FINGERPRINT_KEY: info.fingerprint,
        SETTINGS_KEY: json.dumps(settings or {}, sort_keys=True),
    }
    return ChunkStore(
        collection_name=collection,
        embedding_function=embeddings,
        client=client,
        collection_metadata=metadata if existing is None else None,
    )


def check_compatible(
    existing: dict[str, Any],
    collection: str,
    model: str,
    fingerprint: str,
    settings: dict[str, Any] | None,
) -> None:
    recorded_model = existing.get(MODEL_KEY)
    if recorded_model and (recorded_model != model or existing.get(FINGERPRINT_KEY) != fingerprint):
        raise CollectionMismatchError(
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
            raise CollectionMismatchError(
                f"collection {collection!r} was built with other splitter settings ({diff}); "
                "mixing them leaves chunks of two kinds. Use the recorded settings, another "
                "--collection, or `ingest --rebuild`"
            )
