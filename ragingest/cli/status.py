"""``ragingest status``: what a collection holds and how its last run went, without loading a
model or taking the writer's lock. The alias, records, file states and writer come from the
records database (``records_url``; default: the SQLite file in the store's directory), the
collection from its store (``vectorstore.backends``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from ragingest.errors import CollectionMismatchError
from ragingest.pipeline import runlog
from ragingest.pipeline.lock import Holder, lock_holder
from ragingest.pipeline.state import FileStates
from ragingest.vectorstore.backends import (
    active_kind,
    claim_place,
    open_backend,
    server_options,
    store_files,
)
from ragingest.vectorstore.identity import FINGERPRINT_KEY, MODEL_KEY, SETTINGS_KEY
from ragingest.vectorstore.names import safe_name
from ragingest.vectorstore.records.aliases import read_alias
from ragingest.vectorstore.records.database import display_url, namespace, records_url_for
from ragingest.vectorstore.records.origins import origins
from ragingest.vectorstore.records.record_manager import record_manager

if TYPE_CHECKING:
    from ragingest.vectorstore.records.record_manager import IndexRecords


class Others(TypedDict):
    """Documents of the collection other code wrote (``not_by_ragingest``)."""

    chunks: int
    recorded_here: int
    recorded_elsewhere: dict[str, int]
    namespace: str


class Building(TypedDict):
    """The collection an unfinished ``ingest --rebuild`` is writing."""

    collection: str
    model: str | None
    settings: dict[str, object]  # the splitter settings as recorded (JSON)
    chunks: int


class CollectionStatus(TypedDict):
    """What ``ragingest status`` reports (also its ``--json``)."""

    collection: str
    physical: str
    persist_dir: str | None
    chroma_server: str | None
    records_url: str
    model: str | None
    fingerprint: str | None
    settings: dict[str, object]  # the splitter settings as recorded (JSON)
    chunks: int
    records: int
    files: int
    files_tracked: int
    consistent: bool
    not_by_ragingest: Others | None
    journal: int
    rebuild_in_progress: Building | None
    writer: Holder | None
    last_run: dict[str, object] | None  # the run log's last record (``runlog``)


def collection_status(
    persist_dir: str | Path | None,
    collection: str,
    run_log: str | Path | None = None,
    records_url: str | None = None,
    backend: str | None = None,
) -> CollectionStatus:
    """What ``ragingest status`` reports about ``collection`` (counts, model, settings, the last
    runs), read without writing to the store; ``persist_dir`` may be None with a server (the
    ``backend`` kind's, default ``backends.active_kind()``, inside its ``use``) and a PostgreSQL
    records database (then the run log is read only from ``run_log``)."""
    kind = active_kind(backend)
    options, files = server_options(kind), store_files(kind)
    server = options.active() if options is not None else None
    persist = Path(persist_dir) if persist_dir is not None else None
    if persist is None and server is None:
        raise ValueError("give --persist-dir (the Chroma directory) or a Chroma server")
    claim_place(persist, kind)  # another kind's directory: said before its files are asked for
    if persist is not None and files is not None:
        files.require(persist)
    store = open_backend(persist, kind=kind)
    alias = read_alias(persist, collection, records_url)
    physical = alias.live if alias else safe_name(collection)
    metadata = store.metadata(physical)
    if metadata is None and physical != safe_name(collection):  # a rebuild being settled
        physical = safe_name(collection)  # under its own name already (``pipeline.settle``)
        metadata = store.metadata(physical)
    if metadata is None:
        raise CollectionMismatchError(
            f"collection {collection!r} does not exist in {persist or server}; run "
            "`ragingest ingest` first"
        )
    manager = record_manager(persist, physical, records_url)
    journal = len(manager.journal_items())
    index = store.open(physical)  # no model: counts and ids only
    chunks = index.count()
    records = manager.count()
    others: Others | None = None
    consistent = chunks == records and journal == 0
    if not consistent or not _all_ours(manager):  # who wrote what (lists the ids)
        found = origins(index.ids(), manager)
        consistent = found.consistent and journal == 0
        if found.foreign_in_chroma or found.foreign_recorded:
            others = {
                "chunks": len(found.foreign_in_chroma),
                "recorded_here": len(found.foreign_recorded),
                "recorded_elsewhere": found.elsewhere,
                "namespace": manager.namespace,
            }
    building: Building | None = None
    if alias and alias.building:
        build = store.metadata(alias.building) or {}
        building = {
            "collection": alias.building,
            "model": build.get(MODEL_KEY),
            "settings": json.loads(build.get(SETTINGS_KEY) or "{}"),
            "chunks": store.open(alias.building).count() if build else 0,
        }
    return {
        "collection": collection,
        "physical": physical,
        "persist_dir": str(persist) if persist is not None else None,
        "chroma_server": str(server) if server is not None else None,
        "records_url": display_url(records_url_for(persist, records_url)),
        "model": metadata.get(MODEL_KEY),
        "fingerprint": metadata.get(FINGERPRINT_KEY),
        "settings": json.loads(metadata.get(SETTINGS_KEY) or "{}"),
        "chunks": chunks,
        "records": records,
        "files": len(manager.list_groups()),
        "files_tracked": len(FileStates(persist, namespace(physical), records_url).load()),
        "consistent": consistent,
        "not_by_ragingest": others,
        "journal": journal,
        "rebuild_in_progress": building,
        "writer": lock_holder(persist, collection, records_url),
        "last_run": _last_run(persist, run_log, collection),
    }


def _all_ours(manager: IndexRecords) -> bool:
    """Whether every record of the namespace has a ragingest id (none written by other code
    through the ``RecordManager``, e.g. LangChain's ``index()``)."""
    from ragingest.vectorstore.records.origins import ragingest_form

    return all(ragingest_form(key) for key in manager.list_keys())


def _others_line(others: Others) -> str:
    """What status sees of documents other code wrote, and what ragingest does with them."""
    parts = [f"{others['chunks']} documents in Chroma not written by ragingest"]
    if others["recorded_here"]:
        parts.append(
            f"{others['recorded_here']} records of other code in ragingest's record-manager "
            f"namespace {others['namespace']!r}"
        )
    for name, count in sorted(others["recorded_elsewhere"].items()):
        parts.append(f"{count} of them recorded under namespace {name!r}")
    return (
        "not by ragingest: "
        + "; ".join(parts)
        + f" (ragingest's namespace for this collection: {others['namespace']!r}). ragingest "
        "never updates nor deletes them and counts them apart; `ingest --rebuild` builds the "
        "collection without them"
    )
def _last_run(
    persist: Path | None, run_log: str | Path | None, collection: str
) -> dict[str, object] | None:
    if persist is None and run_log is None:
        return None  # the run log is a file on the ingest machine
    return runlog.last_run(runlog.run_log_path(persist or Path("."), run_log), collection)


def render(status: CollectionStatus) -> str:
    """A status as the text the command prints."""
    physical = status["physical"]
    name = status["collection"] + (
        f" (Chroma collection {physical})" if physical != status["collection"] else ""
    )
    from ragingest.splitters.settings_text import describe

    settings = describe(status["settings"])
    lines = [
        f"collection: {name} in {status['persist_dir'] or status['chroma_server']}",
        f"model: {status['model']} (fingerprint {status['fingerprint']})"
        if status["model"]
        else "model: none recorded (not built by ragingest: `ingest --rebuild` builds it anew)",
        f"splitter: {settings or '-'}",
        f"chunks: {status['chunks']} in Chroma, {status['records']} in the record manager "
        f"({'consistent' if status['consistent'] else 'NOT consistent: the next run repairs it'})",
        f"files: {status['files']} with chunks ({status['files_tracked']} with a recorded state)",
        *([_others_line(others)] if (others := status["not_by_ragingest"]) else []),
        f"records: {status['records_url']}",
    ]
    writer = status["writer"]
    lines.append(
        f"writer: pid {writer.get('pid')} since {writer.get('started')}"
        if writer
        else "writer: none"
    )
    building = status["rebuild_in_progress"]
    if building:
        lines.append(
            f"rebuild in progress: {building['collection']} ({building['model']}, "
            f"{building['chunks']} chunks so far); re-run `ingest --rebuild` to finish it"
        )
    last = status["last_run"]
    if last:
        lines.append(
            f"last run: {last.get('finished')} {last.get('status')}, "
            f"{last.get('seconds')} s; files {last.get('files_seen')} seen, "
            f"{last.get('files_changed')} changed, {last.get('files_failed')} failed, "
            f"{last.get('files_deleted')} gone; chunks {last.get('chunks_added')} added, "
            f"{last.get('chunks_skipped')} skipped, {last.get('chunks_deleted')} deleted; "
            f"{last.get('embeddings_computed')} embeddings computed"
            + (f"; error: {last['error']}" if last.get("error") else "")
        )
    else:
        lines.append("last run: none logged")
    return "\n".join(lines)
