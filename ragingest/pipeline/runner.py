"""``ingest``: one run = lock → lifecycle → plan → engine → writer → run log.

Contract: ``ingest`` never stops on a bad file: the file is named in the report with the
reason and the others go in. Writes go through LangChain's ``index()`` with a persistent
record manager in the records database (``IngestOptions.records_url``: SQLite in the store's
directory by default, PostgreSQL for writers on several machines), so a re-run skips
unchanged chunks, replaces stale ones and deletes the chunks of files that vanished from the
ingested roots. One writer per collection (``lock``); the run log gets one JSON line per run;
a file whose stamp matches its recorded state is not parsed (``plan``); embeddings come from a
cache keyed by model fingerprint + text hash (``vectorstore.cache``), and the model is loaded
only when something must be split or embedded; a model or splitter change is refused unless
``rebuild`` (``lifecycle``); the write order that keeps a killed run recoverable is the
writer's (``writer``). A path that does not exist, or a run that would delete every recorded
source or more than ``max_delete_share`` of them, is refused before anything changes
(``MissingPathError``, ``MassDeleteError``: ``pipeline.deletes``). The store is the
``IngestOptions.backend`` one (``vectorstore.backends``); the upkeep it needs so deleted text
leaves the disk (``port.StoreUpkeep``) is done by the run that deletes, or by the next one.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path

from ragingest.defaults import ENGINES
from ragingest.errors import MassDeleteError, MissingPathError
from ragingest.loaders.sources import DocumentSource
from ragingest.models.embeddings import SentenceTransformerEmbeddings
from ragingest.models.resolve import load_model_info
from ragingest.pipeline import runlog
from ragingest.pipeline.access_sync import (
    recorded_settings,
    refuse_widening,
    sync_access,
    sync_held,
)
from ragingest.pipeline.apply_plan import update
from ragingest.pipeline.checks import (
    note_root_configs,
    require_directory,
    require_output_folder,
)
from ragingest.pipeline.deletes import check_mass_delete, doomed_sources
from ragingest.pipeline.engine import Engine
from ragingest.pipeline.lifecycle import Lifecycle
from ragingest.pipeline.lock import CollectionLock
from ragingest.pipeline.options import IngestOptions
from ragingest.pipeline.plan import Plan, make_plan
from ragingest.pipeline.ray_env import require_ray
from ragingest.pipeline.report import FileResult, RunReport
from ragingest.pipeline.sources import SourcePlan, plan_sources
from ragingest.pipeline.state import FileStates
from ragingest.pipeline.writer import Writer
from ragingest.splitters.factory import SplitSettings, check_sizes
from ragingest.vectorstore import open_store
from ragingest.vectorstore.backends import open_backend
from ragingest.vectorstore.cache import CachedEmbeddings, cached_embeddings
from ragingest.vectorstore.names import safe_name
from ragingest.vectorstore.port import upkeep_of
from ragingest.vectorstore.records.database import namespace
from ragingest.vectorstore.records.origins import ragingest_sources
from ragingest.vectorstore.records.record_manager import record_manager

log = logging.getLogger(__name__)

__all__ = ["IngestOptions", "SplitSettings", "ingest"]


def ingest(
    paths: Sequence[str | Path],
    options: IngestOptions,
    documents: Sequence[DocumentSource] = (),
    report: RunReport | None = None,
) -> RunReport:
    """One run: lock the collection, bring it up to date with ``paths`` and the document
    sources (``pipeline.sources``: LangChain loaders, given Documents), log the run. The run fills
    ``report`` when given, so a caller still has it when the run raises."""
    started = runlog.now()
    clock = time.perf_counter()
    if report is None:
        report = RunReport()
    report.collection = options.collection
    safe_name(options.collection)  # any name a user types maps to a physical one; not empty
    require_directory(options.persist_dir)
    check_sizes(options.split)  # bad settings must not be recorded in a new collection
    require_output_folder(options.run_log, "--run-log", options.persist_dir)
    missing = [str(p) for p in paths if not Path(p).exists()]
    if missing:  # a typo must not read as "every file was deleted"
        raise MissingPathError(missing)
    if options.engine == "ray":
        require_ray()
    try:
        with CollectionLock(
            options.persist_dir, options.collection, options.wait, options.records_url
        ):
            run_locked(paths, options, report, documents)
    except BaseException as exc:
        report.error = f"{type(exc).__name__}: {exc}"
        raise
    finally:
        report.seconds = time.perf_counter() - clock
        runlog.log_run(options, report, started)
    return report


def run_locked(
    paths: Sequence[str | Path],
    options: IngestOptions,
    report: RunReport,
    documents: Sequence[DocumentSource] = (),
) -> None:
    """The run under the lock, in the order that keeps a killed run recoverable."""
    o = options
    backend = open_backend(o.persist_dir, kind=o.backend)
    lifecycle = Lifecycle(o.persist_dir, o.collection, backend, o.records_url)
    target = lifecycle.prepare(o.model, recorded_settings(o), o.rebuild)
    refuse_widening(backend.metadata(lifecycle.live()), o)
    if o.split.unit == "tokens" and o.split.chunk_overlap is not None:  # under the model's cap
        check_sizes(o.split, load_model_info(target.model).max_embed_tokens)
    report.collection = target.physical

    manager = record_manager(o.persist_dir, target.physical, o.records_url)
    states = FileStates(o.persist_dir, namespace(target.physical), o.records_url)
    if backend.metadata(target.physical) is None:
        manager.drop_namespace()  # records of a collection that is gone are lies
        states.drop()

    def load_model() -> SentenceTransformerEmbeddings:
        model = SentenceTransformerEmbeddings(target.model, batch_size=o.embed_batch_size)
        if model.info.fingerprint != target.fingerprint:
            raise RuntimeError(f"model {target.model!r} changed while loading it; run again")
        return model

    embeddings = cached_embeddings(  # stored a model batch at a time: a stopped run keeps them
        o.persist_dir,
        target.model,
        target.fingerprint,
        load_model,
        batch_size=o.embed_batch_size,
        records_url=o.records_url,
    )
    store = open_store(
        o.persist_dir,
        target.physical,
        embeddings,
        settings=target.settings,
        backend=backend,
        resolve=False,
        alias=o.collection if target.rebuilding else None,
        records_url=o.records_url,
    )
    upkeep = upkeep_of(backend)  # e.g. an embedded store's directory (``port.StoreUpkeep``)
    upkeep_owed = upkeep is not None and upkeep.begin()  # before any delete
    if upkeep is not None:
        upkeep.bound(target.physical)
    writer = Writer(store, manager, states, report, o.write_batch_size)
    writer.recover()
    known = states.load()
    plan = make_plan(
        paths,
        known,
        include=o.include,
        exclude=o.exclude,
        max_file_bytes=o.max_file_bytes,
        follow_outside=o.follow_symlinks_outside,
        retry_failed=o.retry_failed,
        store=Path(o.persist_dir),
    )
    note_root_configs(paths, report)
    sourced = plan_sources(
        documents, known, o.cleaning, o.file_timeout, o.file_memory_mb, o.access_policy
    )
    plan.items.extend(sourced.items)
    if o.delete_missing and not o.allow_mass_delete:
        recorded = ragingest_sources(manager, known)  # other code's groups are never deleted
        refuse_mass_delete(plan, sourced, recorded, o, report)
    sync_access(plan, o.access_policy, writer, known, report)  # readers before contents
    recorded_groups = set(known) | set(manager.list_groups())
    held = sourced.keep(recorded_groups) - {item.source for item in plan.items}
    sync_held(held, o.access_policy, writer, known, report)  # a failed loader's too
    keep = update(plan, engine_for(o, embeddings), writer, o)
    for failure in sourced.failed:  # its chunks of the last good run stay
        log.warning("%s", failure)
        report.files.append(
            FileResult(failure.path, "failed", error=failure.reason, kind=failure.kind)
        )
    keep |= sourced.keep(recorded_groups)
    if o.delete_missing:
        writer.delete_missing(known, keep)
    report.rebuilt = lifecycle.finish(target)
    if report.rebuilt:
        report.collection = lifecycle.live()  # settled under the typed name's physical name
    report.embeddings_computed = embeddings.computed
    report.embeddings_cached = embeddings.cached
    report.notes += embeddings.kv.notes if embeddings.kv is not None else []  # a cache set aside
    if upkeep is not None:  # this run's upkeep, and one a killed run still owes
        notes: list[str] = []
        if report.deleted or report.rebuilt or upkeep_owed:
            if upkeep_owed:
                log.info("finishing the retention of a run stopped before it was done")
            notes = upkeep.forget(embeddings.kv)
            report.notes += notes
        upkeep.settle(notes)


def refuse_mass_delete(
    plan: Plan,
    sourced: SourcePlan,
    recorded: set[str],
    options: IngestOptions,
    report: RunReport,
) -> None:
    """``MassDeleteError`` (``pipeline.deletes``) before anything is written or deleted, said in
    ``report.refused`` too."""
    planned = {i.source for i in plan.items if i.status in ("parse", "unchanged", "failed_before")}
    doomed = doomed_sources(recorded, planned | sourced.keep(recorded))
    try:
        check_mass_delete(options.collection, doomed, len(recorded), options.max_delete_share)
    except MassDeleteError as exc:
        report.refused = str(exc)
        raise


def engine_for(options: IngestOptions, embeddings: CachedEmbeddings) -> Engine:
    """The engine ``options.engine`` names, over the run's cached ``embeddings``."""
    if options.engine == "local":
        from ragingest.pipeline.engine_local import LocalEngine

        return LocalEngine(options, embeddings)
    if options.engine == "ray":
        from ragingest.pipeline.engine_ray import RayEngine

        return RayEngine(options, embeddings)
    raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {options.engine!r}")
