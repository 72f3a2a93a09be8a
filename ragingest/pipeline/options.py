"""``IngestOptions``: everything one run is told (the CLI builds it; so can any caller):
where the store is, and the ``RunSettings``. Each field is declared once, here (and the split
settings in ``splitters.factory.SplitSettings``): ``ragingest.ingest`` takes them by name
(``pipeline.api.IngestArguments``).

Two batches, two names: ``embed_batch_size`` texts per model forward pass, ``write_batch_size``
chunks per store write (the CLI's ``--write-batch``). ``batch_size``, the first's old name,
still works (constructing, ``replace``, reading, ``ingest(batch_size=...)``) with a
``DeprecationWarning`` (``RENAMED``)."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from ragingest.defaults import (
    EMBED_BATCH_SIZE,
    ENGINE,
    FILE_TIMEOUT,
    MAX_CHUNKS_PER_FILE,
    MAX_DELETE_SHARE,
    WRITE_BATCH_SIZE,
)
from ragingest.loaders.base import MAX_FILE_BYTES
from ragingest.loaders.bounded import DEFAULT_FILE_MEMORY_MB
from ragingest.loaders.cleaning import CleaningRules
from ragingest.pipeline.access_policy import AccessPolicy
from ragingest.pipeline.deletes import check_share
from ragingest.splitters.content_types import ContentTypeConfig
from ragingest.splitters.factory import SplitSettings
from ragingest.vectorstore.backends import DEFAULT as BACKEND

RENAMED = {"batch_size": "embed_batch_size"}  # an old keyword -> its field, still taken

T = TypeVar("T")


def renamed(old: str, stacklevel: int = 3) -> str:
    """The field ``old`` is the old name of (``RENAMED``), with a ``DeprecationWarning`` that
    says so, told to the caller ``stacklevel`` frames up (3: the caller's caller)."""
    new = RENAMED[old]
    warnings.warn(
        f"{old} is deprecated: it is {new} (texts per model forward pass; chunks per store "
        "write are write_batch_size)",
        DeprecationWarning,
        stacklevel=stacklevel,
    )
    return new


def _takes_old_names(cls: type[T]) -> type[T]:
    """``cls(batch_size=8)`` as ``cls(embed_batch_size=8)``, warned; the old name wins where
    both come (``dataclasses.replace(o, batch_size=8)`` passes every field by name too). The
    shown signature stays the fields'."""
    init: Callable[..., None] = cls.__init__

    @functools.wraps(init)
    def __init__(self: T, *args: Any, **kwargs: Any) -> None:
        for old in RENAMED.keys() & kwargs.keys():
            kwargs[renamed(old)] = kwargs.pop(old)
        init(self, *args, **kwargs)

    cls.__init__ = __init__  # type: ignore[method-assign,assignment]
    return cls


@_takes_old_names
@dataclass(kw_only=True)
class RunSettings:
    """Every setting of a run but the store's folder and collection, keyword-only; defaults
    are a run's."""

    # which store holds the collection: a name of ``vectorstore.backends.backend_names()``
    backend: str = BACKEND
    model: str | None = None  # None: the collection's model, or the default for a new one
    split: SplitSettings = field(default_factory=SplitSettings)
    include: Sequence[str] = ()
    exclude: Sequence[str] = ()
    max_file_bytes: int = MAX_FILE_BYTES
    embed_batch_size: int = EMBED_BATCH_SIZE  # texts per model forward pass
    delete_missing: bool = True
    progress: bool = False
    write_batch_size: int = WRITE_BATCH_SIZE  # chunks per write, whole files
    rebuild: bool = False  # on a model/settings change, rebuild and swap instead of refusing
    wait: bool = False  # wait for another run writing the collection instead of failing
    run_log: Path | None = None  # default: ragingest_runs.jsonl in persist_dir
    # SQLAlchemy URL of the records database (record manager, file states, aliases; with
    # PostgreSQL also the writer lock); None: $RAGINGEST_RECORDS_URL, else SQLite in persist_dir
    records_url: str | None = None
    cleaning: CleaningRules = field(default_factory=CleaningRules)  # each rule switchable
    content_types: ContentTypeConfig | None = None  # None: .ragingest.toml in each root
    engine: str = ENGINE  # "ray": stages on Ray Data (ragingest.pipeline.engine_ray)
    ray_address: str | None = None  # None: a fresh local Ray runtime on 127.0.0.1
    ray_actors: int | None = None  # embedding actors (default: one per CPU, 0.5 CPU each)
    # seconds a file may take to parse (in a worker process, killed past it); None: no bound
    file_timeout: float | None = FILE_TIMEOUT
    # resident memory (MB) a file's parser process and its children may use, libraries
    # included; None: no bound
    file_memory_mb: int | None = DEFAULT_FILE_MEMORY_MB
    # chunks one file may split into (past it the file fails, named); None: no bound
    max_chunks_per_file: int | None = MAX_CHUNKS_PER_FILE
    # try again files that failed past a bound with the same content (else reported, not tried)
    retry_failed: bool = False
    follow_symlinks_outside: bool = False  # follow symlinks out of the ingested roots
    # a run that would delete every recorded source, or more than this share of them, is
    # refused before it changes anything (``pipeline.deletes``) unless ``allow_mass_delete``
    allow_mass_delete: bool = False
    max_delete_share: float = MAX_DELETE_SHARE
    strict: bool = False  # ``ingest()`` raises ``FilesFailedError`` after a run with failures
    # who may read each document (``pipeline.access_policy``); None: no policy, everyone reads
    access_policy: AccessPolicy | None = None

    def __post_init__(self) -> None:
        check_share(self.max_delete_share)
        if self.access_policy is not None and not isinstance(self.access_policy, AccessPolicy):
            raise TypeError(
                f"access_policy must be an AccessPolicy (AccessPolicy.from_config(FILE) reads "
                f"one from the operator's config), got {self.access_policy!r:.80}"
            )

    @property
    def batch_size(self) -> int:
        """Deprecated: ``embed_batch_size`` (texts per model forward pass)."""
        return int(getattr(self, renamed("batch_size")))

    @batch_size.setter
    def batch_size(self, value: int) -> None:
        setattr(self, renamed("batch_size"), value)


@_takes_old_names
@dataclass
class IngestOptions(RunSettings):
    """One run: the store's folder and collection (positional), the ``RunSettings`` by name."""

    persist_dir: Path
    collection: str
