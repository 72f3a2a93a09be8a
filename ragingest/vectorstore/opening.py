"""Opening a collection, whatever the store: ``open_store`` (read and write) and ``open_reader``
(a one-shot read: ``ragingest query``) build a ``collection.Collection`` (the reader: its reads
alone, ``collection_reads.CollectionReads``) from a ``port.Backend``.

Contract: a collection is bound to one model and one splitter setup. A new one records the
model name, its fingerprint and the splitter settings in its metadata
(``identity.store_metadata``); opening an existing one with another model (or, for writing,
other settings) raises ``CollectionMismatchError`` saying what differs and what to do. A name
resolves through the alias table of the records database (``records.aliases``: after
``ingest --rebuild`` it is served by another physical collection, ``NAME__2``...); a rebuild
being settled is found under the backend's own name for it. Opening drops the lexical indexes
of collections that are gone. The side stores live in the records database (``persist_dir``'s
SQLite files by default, else ``records_url`` / ``$RAGINGEST_RECORDS_URL``; PostgreSQL holds
the parent sections and the lexical index too).

``backend``: a ``port.Backend``, or the name of a registered one (``backends.open_backend``;
None: ``backends.active_kind()``), of ``persist_dir`` / ``server``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ragingest.vectorstore.access.principals import Access
from ragingest.vectorstore.backends import (
    active_kind,
    claim_place,
    open_backend,
    server_options,
    store_files,
)
from ragingest.vectorstore.collection_reads import CollectionReads
from ragingest.vectorstore.gate import read_gate
from ragingest.vectorstore.identity import (
    MODEL_KEY,
    check_compatible,
    embeddings_identity,
    missing_collection,
    store_metadata,
)
from ragingest.vectorstore.names import safe_name
from ragingest.vectorstore.port import Backend

if TYPE_CHECKING:  # imported when a store is opened to write: LangChain's retriever machinery
    from langchain_core.embeddings import Embeddings

    from ragingest.vectorstore.collection import Collection

BackendChoice = Backend | str | None


@dataclass
class Place:
    """Where a collection is opened: its backend, the folder of its side stores (a temporary
    copy of a store that can't be written, when asked for), and what must live as long as the
    collection (that copy)."""

    backend: Backend
    persist_dir: str | Path | None
    keep: object = None


def open_place(
    persist_dir: str | Path | None,
    backend: BackendChoice = None,
    server: Any = None,
    *,
    must_exist: bool = False,
    copy_if_read_only: bool = False,
) -> Place:
    """The backend of ``persist_dir`` / ``server`` (module docstring). For a kind whose store
    is files in ``persist_dir`` (``port.StoreFiles``) and no server: ``must_exist`` refuses a
    folder that holds no store and ``copy_if_read_only`` reads one that can't be written from
    a temporary copy, both before the backend opens it (an embedded client may create its
    folder as it opens)."""
    if backend is not None and not isinstance(backend, str):
        return Place(backend, persist_dir)
    kind = active_kind(backend)
    claim_place(persist_dir, kind)  # another kind's directory: said before its files are asked for
    options, files = server_options(kind), store_files(kind)
    server = server or (options.active() if options is not None else None)
    keep: object = None
    if files is not None and server is None:
        if persist_dir is None:
            raise ValueError("give persist_dir (--persist-dir: the store's directory) or a server")
        if copy_if_read_only:
            persist_dir, keep = files.copy_if_read_only(persist_dir)
        if must_exist:
            files.require(persist_dir)
    return Place(open_backend(persist_dir, server, kind), persist_dir, keep)


def _physical(place: Place, collection: str, records_url: str | None, resolve: bool) -> str:
    """The physical collection ``collection`` names (its alias followed when ``resolve``)."""
    if not resolve:
        return collection
    from ragingest.vectorstore.records.location import resolve_in_default_file

    physical = resolve_in_default_file(place.persist_dir, collection, records_url)
    if physical is None:  # another records database: through SQLAlchemy
        from ragingest.vectorstore.records.aliases import resolve_collection

        physical = resolve_collection(place.persist_dir, collection, records_url)
    return physical


def _existing(
    place: Place, collection: str, physical: str, resolve: bool
) -> tuple[str, dict[str, Any] | None]:
    """``physical`` and its metadata (None: no such collection); a rebuild being settled is
    under the backend's own name for ``collection`` already (``pipeline.settle``)."""
    existing = place.backend.metadata(physical)
    own = safe_name(collection)
    if existing is None and resolve and physical != own:
        return own, place.backend.metadata(own)
    return physical, existing


def open_store(
    persist_dir: str | Path | None,
    collection: str,
    embeddings: Embeddings | None = None,
    *,
    model: str | None = None,
    settings: dict[str, Any] | None = None,
    create: bool = True,
    resolve: bool = True,
    alias: str | None = None,
    records_url: str | None = None,
    server: Any = None,
    principals: Access = None,
    backend: BackendChoice = None,
    copy_if_read_only: bool = False,
) -> Collection:
    """Open (or, ``create``, create) ``collection``, refusing a model/settings mismatch.

    ``model=None`` on an existing collection means "the model it was built with".
    ``resolve=False`` opens the physical collection ``collection`` as named (the ingest
    pipeline, which resolved it itself); ``alias`` is recorded on a new physical collection
    built for that name. ``server``: a store server (``chroma.server.ChromaServer``, as
    ``ingest --chroma-host``; default: the one of an enclosing ``use_server``, else the
    embedded ``persist_dir``), which may then be None with a PostgreSQL records database.
    ``copy_if_read_only``: a store folder that can't be written is read from a temporary
    copy, removed with the collection (``HeadingFirstRetriever``'s).

    ``principals`` (``access.Principals`` or ``ALL``): every read of the collection,
    LangChain's (``as_retriever``, ``similarity_search*``, ``max_marginal_relevance_search*``,
    ``get``, ``get_by_ids``) and the seam's, admits only what they may read. Without them (the
    writer's open) the seam's reads see every chunk, and on a collection with an access
    policy LangChain's reads raise ``PrincipalsRequiredError``.
    """
    place = open_place(
        persist_dir,
        backend,
        server,
        must_exist=not create,
        copy_if_read_only=copy_if_read_only,
    )
    folder = place.persist_dir
    physical = _physical(place, collection, records_url, resolve)
    physical, existing = _existing(place, collection, physical, resolve)
    if existing is None and not create:
        raise missing_collection(collection, folder or server)
    if embeddings is None:
        from ragingest.models.embeddings import SentenceTransformerEmbeddings

        embeddings = SentenceTransformerEmbeddings(model or (existing or {}).get(MODEL_KEY))
    name, fingerprint = embeddings_identity(embeddings)
    if existing is not None:
        check_compatible(existing, collection, name, fingerprint, settings)
        index = place.backend.open(physical)
    else:
        fresh = store_metadata(name, fingerprint, settings, alias)
        index = place.backend.create(physical, fresh)
    from ragingest.vectorstore.collection import Collection
    from ragingest.vectorstore.lexical.location import drop_orphan_indexes, lexical_index
    from ragingest.vectorstore.records.parents import ParentStore

    opened = Collection(
        index, embeddings, lexical=lexical_index(folder, physical, records_url),
        parents=ParentStore(folder, physical, records_url),
        gate=read_gate(folder, physical, records_url), remote=place.backend.remote,
        principals=principals, keep=place.keep,
    )  # fmt: skip
    drop_orphan_indexes(folder, records_url, place.backend.names)
    return opened


def open_reader(
    persist_dir: str | Path | None,
    collection: str,
    *,
    model: str | None = None,
    records_url: str | None = None,
    server: Any = None,
    backend: BackendChoice = None,
) -> CollectionReads:
    """The existing ``collection`` opened read-only for one-shot searches, exactly as
    ``open_store(..., create=False)`` refuses (no store, no collection, another model; the
    alias followed; orphaned lexical indexes dropped), but light: the model through
    ``models.encoder.ModelEncoder`` (ONNX where set up), no parent sections, no SQLAlchemy
    for the default records file. It has no write method: a lexical index
    out of step needs ``open_store``'s ``sync_lexical``. ``model=None``: the recorded one."""
    from ragingest.models.encoder import ModelEncoder
    from ragingest.vectorstore.lexical.location import drop_orphan_indexes, lexical_index

    place = open_place(persist_dir, backend, server, must_exist=True)
    folder = place.persist_dir
    physical, existing = _existing(
        place, collection, _physical(place, collection, records_url, True), True
    )
    if existing is None:
        raise missing_collection(collection, folder or server)
    # Embeddings' two methods, without importing sentence-transformers' LangChain wrapper
    embeddings = cast("Embeddings", ModelEncoder(model or existing.get(MODEL_KEY)))
    name, fingerprint = embeddings_identity(embeddings)
    check_compatible(existing, collection, name, fingerprint, None)
    drop_orphan_indexes(folder, records_url, place.backend.names)
    return CollectionReads(
        place.backend.open(physical), embeddings,
        lexical=lexical_index(folder, physical, records_url),
        gate=read_gate(folder, physical, records_url), remote=place.backend.remote,
    )  # fmt: skip
