"""The local engine: walk → load → split → embed → Chroma, through LangChain's ``index()``.

Contract: ``ingest`` never stops on a bad file: the file is named in the report with the
reason and the others go in. Writes go through ``index()`` with a persistent
``SQLRecordManager`` in the records database (``IngestOptions.records_url``: SQLite beside the
Chroma directory by default, PostgreSQL for writers on several machines), so a re-run skips
unchanged chunks, replaces stale ones and deletes the chunks of files that vanished from the
ingested roots.

Re-indexing on a schedule (issue 4):

- one writer per collection (``ingest.lock``); the run log gets one JSON line per run;
- a file whose size, mtime and sha256 match its recorded state is not parsed
  (``ingest.state``); embeddings come from a cache keyed by model fingerprint + text hash
  (``vectorstore.cache``), and the model is loaded only when something must be embedded;
- a model or splitter change is refused unless ``rebuild``: then a new physical collection is
  filled (resumably) and swapped in through the alias table when complete;
- crash safety, in write order, per group of files: their file states out → journal the ids
  (``vectorstore.records``) → Chroma → record manager (clears the journal) → their stale
  chunks out (journaled the same way) → their new file states; then vanished files out (state
  first) → swap. The next run first finishes what the journal says was half done, so Chroma's
  ids are exactly the record manager's keys, and a file without a state row is parsed again
  (its unchanged chunks are skipped, its vectors come from the cache).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import os
import re
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.documents import Document
from langchain_core.indexing import index

from ragingest.errors import CollectionMismatchError, FileError, UnsupportedFormatError
from ragingest.ingest import runlog
from ragingest.ingest.lock import CollectionLock
from ragingest.ingest.report import FileResult, RunReport
from ragingest.ingest.state import VERSION as STATE_VERSION
from ragingest.ingest.state import FileStamp, FileState, FileStates
from ragingest.ingest.state import namespaces as state_namespaces
from ragingest.loaders import loader_for, walk
from ragingest.loaders.base import MAX_FILE_BYTES
from ragingest.loaders.cleaning import ChunkList, CleaningRules, CorpusCleaner, apply_corpus
from ragingest.schema import breadcrumb_title, chunk_metadata
from ragingest.splitters import HeadingFirstSplitter
from ragingest.splitters.content_types import (
    ContentTypeConfig,
    config_for_root,
    detect,
    splitter_for,
)
from ragingest.vectorstore.cache import cached_embeddings
from ragingest.vectorstore.embeddings import SentenceTransformerEmbeddings
from ragingest.vectorstore.parents import PARENT_KEY
from ragingest.vectorstore.records import Alias, Catalog, namespace, record_manager
from ragingest.vectorstore.store import (
    ALIAS_KEY,
    EMBED_KEY,
    MODEL_KEY,
    chroma_client,
    collection_metadata,
    mismatch,
    model_identity,
    open_store,
)

log = logging.getLogger(__name__)

_COLLECTION_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{1,498})[A-Za-z0-9]")
_DELETE_BATCH = 1000  # ids per Chroma delete (under its max batch) and per SQL statement
FILE_KEY = "_file"  # the walked file a chunk came from: its record-manager group; never stored


@dataclass
class SplitSettings:
    """Everything that decides chunk boundaries; recorded in the collection."""

    chunk_size: int | None = None
    chunk_overlap: int | None = None
    min_chunk_size: int = 100
    unit: str = "tokens"
    context_prefix: bool = True
    split_levels: tuple[int, ...] = (2, 3)

    def splitter(self, embeddings: SentenceTransformerEmbeddings) -> HeadingFirstSplitter:
        return HeadingFirstSplitter(
            self.chunk_size,
            self.chunk_overlap,
            self.min_chunk_size,
            unit=self.unit,  # type: ignore[arg-type]
            tokenizer=embeddings.info.tokenizer,
            max_embed_tokens=embeddings.info.max_embed_tokens,
            split_levels=self.split_levels,
            context_prefix=self.context_prefix,
        )

    def recorded(self) -> dict[str, Any]:
        data = asdict(self)
        data["split_levels"] = list(self.split_levels)
        return data


@dataclass
class IngestOptions:
    persist_dir: Path
    collection: str
    model: str | None = None  # None: the collection's model, or the default for a new one
    split: SplitSettings = field(default_factory=SplitSettings)
    include: Sequence[str] = ()
    exclude: Sequence[str] = ()
    max_file_bytes: int = MAX_FILE_BYTES
    batch_size: int = 64  # texts per model forward pass
    delete_missing: bool = True
    progress: bool = False
    write_batch_size: int = 256  # chunks per write; whole files, a killed run redoes one batch
    rebuild: bool = False  # on a model/settings change, rebuild and swap instead of refusing
    wait: bool = False  # wait for another run writing the collection instead of failing
    run_log: Path | None = None  # default: ragingest_runs.jsonl in persist_dir
    # SQLAlchemy URL of the records database (record manager, file states, aliases; with
    # PostgreSQL also the writer lock); None: $RAGINGEST_RECORDS_URL, else SQLite in persist_dir
    records_url: str | None = None
    cleaning: CleaningRules = field(default_factory=CleaningRules)  # each rule switchable
    content_types: ContentTypeConfig | None = None  # None: .ragingest.toml in each root
    engine: str = "local"  # "ray": stages on Ray Data (ragingest.ingest.ray_engine)
    ray_address: str | None = None  # None: a fresh local Ray runtime on 127.0.0.1
    ray_actors: int | None = None  # embedding actors (default: one per CPU, 0.5 CPU each)


def split_file(
    path: Path,
    root: Path | None,
    splitter: HeadingFirstSplitter,
    max_file_bytes: int = MAX_FILE_BYTES,
    *,
    cleaning: CleaningRules | None = None,
    content_types: ContentTypeConfig | None = None,
    corpus: CorpusCleaner | None = None,
) -> ChunkList:
    """Load one file and return its chunks as Documents (``EMBED_KEY`` holds the embedded
    text; ``.cleaning`` what cleaning removed); raises a ``FileError`` naming the file. Each
    document gets the splitter of its content type (``splitters.content_types``; the config
    defaults to ``.ragingest.toml`` in ``root``); ``corpus`` removes run-wide boilerplate."""
    documents = ChunkList()
    loader = loader_for(path, root, max_file_bytes, cleaning)
    try:
        config = content_types if content_types is not None else config_for_root(root)
        loaded = corpus.take(str(path)) if corpus is not None else None
        for document in loaded if loaded is not None else loader.lazy_load():
            document = apply_corpus(document, corpus, documents.cleaning)
            content_type = detect(document.page_content, document.metadata, config)
            chunks = splitter_for(content_type, splitter).split_chunks(
                document.page_content, title=breadcrumb_title(document.metadata)
            )
            for i, chunk in enumerate(chunks):
                metadata = chunk_metadata(document.metadata, chunk, i, len(chunks))
                metadata["content_type"] = content_type
                metadata[EMBED_KEY] = chunk.embed_text
                metadata[PARENT_KEY] = document.page_content[slice(*chunk.parent_span)]
                documents.append(Document(page_content=chunk.text, metadata=metadata))
    except FileError:
        raise
    except Exception as exc:
        raise FileError(path, f"{type(exc).__name__}: {exc}") from exc
    return documents


def _scan_corpus(files: list[Any], known: dict[str, Any], o: IngestOptions) -> CorpusCleaner | None:
    """Boilerplate across files (cleaning rule ``boilerplate``): a first pass over the files
    this run parses (new or changed) counts their paragraphs; their documents are kept for
    ``split_file`` so nothing is parsed twice (within the cache budget)."""
    if not o.cleaning.boilerplate:
        return None
    corpus = CorpusCleaner(o.cleaning)
    for found in files:
        stamp = _stamp(found.path, o.max_file_bytes)
        state = known.get(found.source)
        if stamp and state and state.stamp == stamp and state.version == STATE_VERSION:
            continue
        try:
            loader = loader_for(found.path, found.root, o.max_file_bytes, o.cleaning)
            documents = list(loader.lazy_load())
        except Exception:  # split_file names the failure
            continue
        corpus.observe(d.page_content for d in documents)
        corpus.remember(str(found.path), documents)
    return corpus


def ingest(paths: Sequence[str | Path], options: IngestOptions) -> RunReport:
    """One run: lock the collection, bring it up to date with ``paths``, log the run."""
    started = _now()
    clock = time.perf_counter()
    report = RunReport(collection=options.collection)
    if not _COLLECTION_NAME.fullmatch(options.collection):
        raise ValueError(
            f"bad collection name {options.collection!r}: 3-500 characters of letters, digits, "
            "'.', '_', '-', starting and ending with a letter or digit"
        )
    try:
        with CollectionLock(
            options.persist_dir, options.collection, options.wait, options.records_url
        ):
            _runner(options)(paths, options, report).run()
    except BaseException as exc:
        report.error = f"{type(exc).__name__}: {exc}"
        raise
    finally:
        report.seconds = time.perf_counter() - clock
        _log_run(options, report, started)
    return report


class _Run:
    """The steps of one locked run, in the order that keeps a killed run recoverable."""

    def __init__(self, paths: Sequence[str | Path], options: IngestOptions, report: RunReport):
        self.paths = paths
        self.options = options
        self.report = report

    def run(self) -> None:
        o, report = self.options, self.report
        client = chroma_client(o.persist_dir)
        catalog = Catalog(o.persist_dir, o.records_url)
        alias = catalog.get(o.collection)
        live = collection_metadata(client, alias.live)
        name, fingerprint = model_identity(o.model or (live or {}).get(MODEL_KEY))
        settings = o.split.recorded()
        target = alias.live
        problem = live and mismatch(live, o.collection, name, fingerprint, settings)
        if problem:
            if not o.rebuild:
                raise CollectionMismatchError(problem)
            target = self._build_target(client, catalog, name, fingerprint, settings)
        elif alias.building:  # an unfinished rebuild nobody wants any more
            catalog.drop_build(o.collection)
            self._drop(client, alias.building)
        self._collect_garbage(client, catalog.get(o.collection))
        report.collection = target
        if target != alias.live:
            log.warning("rebuilding %r into %r; it is swapped in when complete", alias.name, target)

        manager = record_manager(o.persist_dir, target, o.records_url)
        states = FileStates(o.persist_dir, namespace(target), o.records_url)
        if collection_metadata(client, target) is None:
            manager.drop_namespace()  # records of a collection that is gone are lies
            states.drop()

        def load_model() -> SentenceTransformerEmbeddings:
            model = SentenceTransformerEmbeddings(name, batch_size=o.batch_size)
            if model.info.fingerprint != fingerprint:
                raise RuntimeError(f"model {name!r} changed while loading it; run again")
            return model

        embeddings = cached_embeddings(o.persist_dir, name, fingerprint, load_model)
        store = open_store(
            o.persist_dir,
            target,
            embeddings,
            settings=settings,
            client=client,
            resolve=False,
            alias=o.collection if target != o.collection else None,
        )
        store.journal = manager.journal
        self.manager, self.store, self.states, self.embeddings = manager, store, states, embeddings

        recovered = manager.recover(self._delete_unjournaled)
        if recovered:
            log.warning("finished an interrupted run: %d half-written chunks removed", recovered)
        if store._collection.count() != manager.count():
            self._reconcile()
        self._update(states.load())

        if target != alias.live:
            old = catalog.swap(o.collection)
            self._drop(client, old)
            report.rebuilt = True
        report.embeddings_computed = embeddings.computed
        report.embeddings_cached = embeddings.cached

    def _update(self, known: dict[str, FileState]) -> None:
        """Parse new and changed files, write them a group at a time, delete vanished ones."""
        o, report = self.options, self.report
        keep: set[str] = set()
        group: list[tuple[str, FileStamp | None, list[Document]]] = []
        pending = 0
        files = list(walk(self.paths, o.include, o.exclude))
        corpus = self._scan(files, known)
        for found in _progress(files, o.progress):
            source = found.source
            try:
                loader_for(found.path, found.root, o.max_file_bytes)
            except UnsupportedFormatError as exc:  # known by its name: don't even read it
                report.files.append(
                    FileResult(source, "unsupported", error=exc.reason, kind=exc.kind)
                )
                continue
            except Exception:  # split_file below names the failure
                pass
            stamp = _stamp(found.path, o.max_file_bytes)
            state = known.get(source)
            if stamp and state and state.stamp == stamp and state.version == STATE_VERSION:
                keep.add(source)
                report.files.append(FileResult(source, "unchanged", chunks=state.chunks))
                report.skipped += state.chunks
                continue
            try:
                chunks = self._split(found, corpus)
            except UnsupportedFormatError as exc:
                report.files.append(
                    FileResult(source, "unsupported", error=exc.reason, kind=exc.kind)
                )
                continue
            except FileError as exc:  # its last good chunks stay
                log.warning("%s", exc)
                keep.add(source)
                report.files.append(FileResult(source, "failed", error=exc.reason, kind=exc.kind))
                continue
            keep.add(source)
            report.files.append(
                FileResult(source, "ok", chunks=len(chunks), cleaning=chunks.cleaning)
            )
            for chunk in chunks:
                chunk.metadata[FILE_KEY] = source
            group.append((source, stamp, chunks))
            pending += len(chunks)
            if pending >= o.write_batch_size:
                self._write(group)
                group, pending = [], 0
        self._write(group)
        if o.delete_missing:
            gone = (set(self.manager.list_groups()) | set(known)) - keep
            for source in sorted(gone):
                report.deleted += self._delete_sources([source])
                report.files_deleted += 1

    def _scan(self, files: list[Any], known: dict[str, FileState]) -> CorpusCleaner | None:
        return _scan_corpus(files, known, self.options)

    def _split(self, found: Any, corpus: CorpusCleaner | None) -> ChunkList:
        """One file's chunks (the Ray engine overrides this and ``_scan``)."""
        o = self.options
        if getattr(self, "splitter", None) is None:
            self.splitter = o.split.splitter(self.embeddings.lazy.embeddings)
        return split_file(
            found.path,
            found.root,
            self.splitter,
            o.max_file_bytes,
            cleaning=o.cleaning,
            content_types=o.content_types,
            corpus=corpus,
        )

    def _write(self, group: list[tuple[str, FileStamp | None, list[Document]]]) -> None:
        """The files' old states out, their chunks into Chroma and the record manager (adds,
        then their stale chunks out), and only then their new states: a state row always
        describes exactly the chunks stored for its file."""
        if not group:
            return
        self.states.delete([source for source, _stamp, _chunks in group])
        documents = [doc for _source, _stamp, chunks in group for doc in chunks]
        if documents:
            result = index(
                documents,
                self.manager,
                self.store,
                batch_size=self.options.write_batch_size,
                cleanup="scoped_full",
                source_id_key=_file_of,
                key_encoder="sha256",
            )
            self.report.added += result["num_added"]
            self.report.updated += result["num_updated"]
            self.report.skipped += result["num_skipped"]
            self.report.deleted += result["num_deleted"]
        empty = [source for source, _stamp, chunks in group if not chunks]
        if empty:  # nothing of the file went through index(): its old chunks go here
            self.report.deleted += self._delete_sources(empty)
        self.states.put(
            (source, FileState(stamp, len(chunks))) for source, stamp, chunks in group if stamp
        )
        log.info(
            "wrote %d files (%d chunks): %s",
            len(group),
            len(documents),
            ", ".join(source for source, _stamp, _chunks in group),
        )

    def _delete_sources(self, sources: list[str]) -> int:
        """Delete every chunk of ``sources``: file states, then Chroma (journaled), records."""
        self.states.delete(sources)
        deleted = 0
        for source in sources:
            keys = self.manager.list_keys(group_ids=[source])
            for i in range(0, len(keys), _DELETE_BATCH):
                part = keys[i : i + _DELETE_BATCH]
                self.store.delete(part)
                self.manager.delete_keys(part)
            deleted += len(keys)
        return deleted

    def _delete_unjournaled(self, ids: list[str]) -> None:
        self.store._collection.delete(ids=ids)

    def _reconcile(self) -> None:
        """Chroma and the record manager disagree (a directory copied in part, a file deleted
        by hand): Chroma ids without a record go; records without a Chroma id go with their
        files' states, so those files are parsed again now."""
        in_chroma = set(self.store._collection.get(include=[])["ids"])
        recorded = set(self.manager.list_keys())
        extra = sorted(in_chroma - recorded)
        for i in range(0, len(extra), _DELETE_BATCH):
            self._delete_unjournaled(extra[i : i + _DELETE_BATCH])
        missing = recorded - in_chroma
        sources = [
            group
            for group in self.manager.list_groups()
            if missing & set(self.manager.list_keys(group_ids=[group]))
        ]
        self.states.delete(sources)
        lost = sorted(missing)
        for i in range(0, len(lost), _DELETE_BATCH):
            self.manager.delete_keys(lost[i : i + _DELETE_BATCH])
        log.warning(
            "Chroma and the record manager disagreed: %d chunks removed, %d files to parse again",
            len(extra),
            len(sources),
        )

    def _build_target(
        self,
        client: Any,
        catalog: Catalog,
        name: str,
        fingerprint: str,
        settings: dict[str, Any],
    ) -> str:
        """The physical collection a --rebuild fills: the interrupted one when it was for the
        same model and settings, else a new one."""
        alias = catalog.get(self.options.collection)
        if alias.building:
            existing = collection_metadata(client, alias.building)
            if existing is None or not mismatch(existing, alias.name, name, fingerprint, settings):
                log.warning("resuming the interrupted rebuild of %r", alias.name)
                return alias.building
            self._drop(client, alias.building)
        target = catalog.start_build(alias.name)
        self._drop(client, target)
        return target

    def _collect_garbage(self, client: Any, alias: Alias) -> None:
        """Drop the physical collections of this name that neither serve it nor are being
        built (left by a run killed between a swap and the drop of the old collection)."""
        keep = {alias.live, alias.building}
        doomed: set[str] = set()
        for collection in client.list_collections():
            metadata = collection.metadata or {}
            ours = metadata.get(ALIAS_KEY) == alias.name or collection.name == alias.name
            if ours and collection.name not in keep:
                doomed.add(collection.name)
        pattern = re.compile(re.escape(namespace(alias.name)) + r"(__\d+)?")
        o = self.options
        known = set(record_manager(o.persist_dir, alias.live, o.records_url).namespaces())
        known |= set(state_namespaces(o.persist_dir, o.records_url))
        for name in known:
            physical = name.removeprefix("chroma/")
            if (
                pattern.fullmatch(name)
                and physical not in keep
                and collection_metadata(client, physical) is None
            ):
                doomed.add(physical)
        for physical in sorted(doomed):
            self._drop(client, physical)

    def _drop(self, client: Any, physical: str) -> None:
        """Delete a physical collection, then its records and file states."""
        with contextlib.suppress(Exception):  # already gone
            client.delete_collection(physical)
        o = self.options
        record_manager(o.persist_dir, physical, o.records_url).drop_namespace()
        FileStates(o.persist_dir, namespace(physical), o.records_url).drop()
        log.info("dropped collection %r", physical)


def _runner(options: IngestOptions) -> type[_Run]:
    if options.engine == "local":
        return _Run
    if options.engine == "ray":
        from ragingest.ingest.ray_engine import RayRun

        return RayRun
    raise ValueError(f"engine must be 'local' or 'ray', got {options.engine!r}")


def _file_of(document: Document) -> str:
    return document.metadata[FILE_KEY]


def _stamp(path: Path, max_file_bytes: int) -> FileStamp | None:
    """The file's stamp, or None when it can't be read or is too large to be ingested (the
    parse that follows names the reason)."""
    try:
        if path.stat().st_size > max_file_bytes:
            return None
        return FileStamp.of(path)
    except OSError:
        return None


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")


def _log_run(options: IngestOptions, report: RunReport, started: str) -> None:
    status = "error" if report.error else ("failed_files" if report.failed else "ok")
    record = {
        "started": started,
        "finished": _now(),
        "seconds": round(report.seconds, 3),
        "collection": options.collection,
        "physical": report.collection,
        "persist_dir": str(options.persist_dir),
        "status": status,
        "error": report.error,
        "files_seen": len(report.files),
        "files_changed": report.changed,
        "files_unchanged": report.unchanged,
        "files_failed": report.failed,
        "files_deleted": report.files_deleted,
        "chunks_added": report.added,
        "chunks_skipped": report.skipped,
        "chunks_deleted": report.deleted,
        "chunks_updated": report.updated,
        "embeddings_computed": report.embeddings_computed,
        "embeddings_cached": report.embeddings_cached,
        "rebuilt": report.rebuilt,
        "pid": os.getpid(),
    }
    try:
        runlog.append(runlog.run_log_path(options.persist_dir, options.run_log), record)
    except OSError as exc:
        log.warning("could not write the run log: %s", exc)


def _progress(items: list, enabled: bool) -> Any:
    if not enabled:
        return items
    from tqdm import tqdm

    return tqdm(items, desc="ingest", unit="file", leave=False)
