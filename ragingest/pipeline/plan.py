"""The plan of a run: what each walked file needs, decided once, in walk order.

``make_plan`` walks the paths and gives every entry one status: ``skipped`` (not a regular
file inside the roots: ``loaders.walk``), ``unsupported`` (no loader for its name: not even
read), ``unchanged`` (the skip rule, ``is_unchanged``) or ``parse``
(a ``FileTask`` for the engine). ``scan_corpus`` is the boilerplate scan over the tasks.

A ``FileTask`` is keyed by its ``source`` (the record-manager group and file-state key). Its
documents come from its file's loader, or are given (``documents``: a non-file source); either
way the split stage (``split.split_task``) cuts them the same way.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.documents import Document

from ragingest.errors import UnreadableFileError, UnsupportedFormatError
from ragingest.loaders import loader_for
from ragingest.loaders.base import MAX_FILE_BYTES
from ragingest.loaders.cleaning.corpus import CorpusCleaner, document_pages
from ragingest.loaders.cleaning.rules import CleaningRules
from ragingest.loaders.inputs.identity import FileIdentity
from ragingest.loaders.inputs.walk import SkippedFile, walk_entries
from ragingest.loaders.process.bounded import ParserPool
from ragingest.pipeline.stamps import VERSION, FileStamp, FileState, known_failure


@dataclass(frozen=True)
class FileTask:
    """One source to split: a file (``path`` under ``root``) or given ``documents``."""

    source: str
    path: Path | None = None
    root: Path | None = None
    stamp: FileStamp | None = None  # taken before parsing; None: unreadable or too large
    documents: tuple[Document, ...] | None = None
    base: Path | None = None  # what ``source`` is relative to (``walk.source_bases``); None: root
    identity: FileIdentity | None = None  # the file the walk checked: only it is read
    # its readers under the run's access policy (``pipeline.access_sync``); None: no policy
    access: tuple[str, ...] | None = None

    @property
    def source_root(self) -> Path | None:
        """The folder the loader makes ``metadata["source"]`` relative to."""
        return self.base or self.root

    @property
    def name(self) -> str:
        """What messages call it: the file's path, else the source."""
        return str(self.path) if self.path is not None else self.source

    def load(
        self,
        max_file_bytes: int,
        cleaning: CleaningRules | None,
        parsers: ParserPool | None = None,
    ) -> Iterator[Document]:
        """The task's documents: the given ones, else its file's loader's (in ``parsers``'
        worker, under its time bound, when given)."""
        if self.documents is not None:
            return iter(self.documents)
        assert self.path is not None
        if parsers is not None:
            return iter(
                parsers.load(self.path, self.source_root, max_file_bytes, cleaning, self.identity)
            )
        loader = loader_for(self.path, self.source_root, max_file_bytes, cleaning, self.identity)
        return loader.lazy_load()


@dataclass(frozen=True)
class PlanItem:
    """What a run does with one source: parse it, leave it (unchanged), report it unsupported or
    skipped."""
    source: str
    status: str  # "parse" | "unchanged" | "failed_before" | "unsupported" | "skipped"
    task: FileTask | None = None  # for "parse"
    state: FileState | None = None  # for "unchanged" and "failed_before": the recorded state
    failure: str = ""  # for "failed_before": the kind it failed with (``known_failure``)
    unsupported: UnsupportedFormatError | None = None
    skipped: SkippedFile | None = None  # for "skipped": not read (the walk says why)
    path: Path | None = None  # the walked file, when it is one
    # its readers under the run's access policy (``pipeline.access_sync``); None: no policy
    access: tuple[str, ...] | None = None
    # joined pages naming different readers: each chunk carries its pages' (``pipeline.split``)
    page_readers: bool = False


@dataclass
class Plan:
    """What a run does with each of its sources, in order."""
    items: list[PlanItem] = field(default_factory=list)

    @property
    def tasks(self) -> list[FileTask]:
        """The files to parse, in plan order."""
        return [item.task for item in self.items if item.task is not None]


def stamp_of(
    path: Path, max_file_bytes: int, identity: FileIdentity | None = None
) -> FileStamp | None:
    """The file's stamp (of the file the walk checked, with its ``identity``), or None when it
    can't be read, was replaced or is too large to be ingested (the parse that follows names
    the reason)."""
    try:
        if path.stat().st_size > max_file_bytes:
            return None
        return FileStamp.of(path, identity)
    except (OSError, UnreadableFileError):
        return None


def is_unchanged(stamp: FileStamp | None, state: FileState | None) -> bool:
    """The skip rule: a file whose size, mtime and sha256 match its recorded state, recorded
    by this code version, is not parsed."""
    return bool(stamp and state and state.stamp == stamp and state.version == VERSION)


def unsupported(
    path: Path, root: Path | None, max_file_bytes: int
) -> UnsupportedFormatError | None:
    """Why no loader takes ``path`` by its name (then it is not even read), else None."""
    try:
        loader_for(path, root, max_file_bytes)
    except UnsupportedFormatError as exc:
        return exc
    except Exception:  # the split names the failure
        return None
    return None


def make_plan(
    paths: Sequence[str | Path],
    known: dict[str, FileState],
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    max_file_bytes: int = MAX_FILE_BYTES,
    follow_outside: bool = False,
    retry_failed: bool = False,
    store: Path | None = None,
) -> Plan:
    """Every walked file with its status (see the module docstring); the walk's skipped
    entries (not regular files, symlinks out of the roots, loops) as ``skipped``; a file that
    failed past a bound with the same bytes (``stamps.known_failure``) as ``failed_before``
    unless ``retry_failed``. The ``store`` folder (the run's persist dir) inside a root is one
    ``skipped`` entry, its files never read: the store would ingest its own run log."""
    plan = Plan()
    inside_store = _inside(store)
    store_noted = False
    for found in walk_entries(paths, include, exclude, follow_outside):
        source = found.source
        if inside_store(found.path):
            if not store_noted and store is not None:
                reason = "the store's own folder (--persist-dir): its files are not ingested"
                entry = SkippedFile(store, found.root, "store", reason, base=found.base)
                plan.items.append(PlanItem(entry.source, "skipped", skipped=entry))
                store_noted = True
            continue
        if isinstance(found, SkippedFile):
            plan.items.append(PlanItem(source, "skipped", skipped=found))
            continue
        refused = unsupported(found.path, found.root, max_file_bytes)
        if refused is not None:
            plan.items.append(PlanItem(source, "unsupported", unsupported=refused))
            continue
        stamp = stamp_of(found.path, max_file_bytes, found.identity)
        state = known.get(source)
        if is_unchanged(stamp, state):
            plan.items.append(PlanItem(source, "unchanged", state=state, path=found.path))
            continue
        failure = None if retry_failed else known_failure(stamp, state)
        if failure:
            plan.items.append(
                PlanItem(source, "failed_before", state=state, failure=failure, path=found.path)
            )
            continue
        task = FileTask(
            source, found.path, found.root, stamp, base=found.base, identity=found.identity
        )
        plan.items.append(PlanItem(source, "parse", task=task, path=found.path))
    return plan


def _inside(folder: Path | None) -> Callable[[Path], bool]:
    """Whether a path lies in ``folder`` (as given or resolved); never when it is None."""
    if folder is None:
        return lambda _path: False
    prefixes = tuple({os.path.abspath(folder) + os.sep, os.path.realpath(folder) + os.sep})
    return lambda path: os.path.abspath(path).startswith(prefixes)


def scan_corpus(
    tasks: Sequence[FileTask],
    cleaning: CleaningRules,
    max_file_bytes: int = MAX_FILE_BYTES,
    parsers: ParserPool | None = None,
) -> CorpusCleaner | None:
    """Copies and boilerplate across files (``loaders.cleaning.corpus``; cleaning rule
    ``boilerplate``): a first pass over the tasks digests their documents; the loaded
    documents are kept (within the cache budget, keyed by ``FileTask.name``) so the split
    does not parse a file twice. None when the rule is off."""
    if not cleaning.boilerplate:
        return None
    corpus = CorpusCleaner(cleaning)
    for task in tasks:
        try:
            documents: list[Any] = list(task.load(max_file_bytes, cleaning, parsers))
        except Exception:  # the split names the failure
            continue
        corpus.observe(task.name, document_pages(documents))
        if task.documents is None:
            corpus.remember(task.name, documents)
    return corpus

