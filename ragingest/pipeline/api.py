"""The Python API of a run, behind ``ragingest.ingest(sources, *, persist_dir, collection,
**settings)``.

``sources``: paths (files or folders), LangChain ``BaseLoader``s (ours or any of
langchain-community's) and iterables of ``Document``s, in any mix (``loaders.sources``).
Every kind gets the same re-indexing: keyed by ``metadata["source"]`` (a file: its path under
the ingested root, prefixed by the root's name when several are given: ``loaders.walk``), an
unchanged source is not split or embedded again, a source gone from
this run's output has its chunks deleted, under the same lock, journal, model guard, parent
sections and run report. ``settings`` are the fields of ``IngestOptions`` and of its
``SplitSettings`` by name (``chunk_size=200``, ``rebuild=True``, ...; ``IngestSettings`` types
them), or a whole ``options=IngestOptions(...)`` (its ``persist_dir``/``collection`` replaced
by the arguments). An unknown name raises ``TypeError`` listing the known ones.

Refusals raise before anything changes: a path that does not exist (``MissingPathError``, a
``FileNotFoundError``), a run that would delete every recorded source or more than
``max_delete_share`` of them (``MassDeleteError``; ``allow_mass_delete=True`` confirms). A
file that fails is logged as a warning and named in the report; ``strict=True`` (or
``report.raise_for_failures()``) raises ``FilesFailedError`` after the run when any did.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import fields, replace
from pathlib import Path
from typing import Any, TypedDict

from ragingest.loaders.cleaning import CleaningRules
from ragingest.loaders.sources import split_sources
from ragingest.pipeline.access_policy import AccessPolicy
from ragingest.pipeline.options import IngestOptions
from ragingest.pipeline.report import RunReport
from ragingest.pipeline.runner import ingest as run_all
from ragingest.splitters.content_types import ContentTypeConfig
from ragingest.splitters.factory import SplitSettings


class IngestSettings(TypedDict, total=False):
    """The keyword settings of ``ragingest.ingest``: every field of ``IngestOptions`` but the
    store's place, and every field of ``SplitSettings`` (or a whole ``split``), by name; see
    those classes for what each means and its default."""

    model: str | None
    split: SplitSettings
    include: Sequence[str]
    exclude: Sequence[str]
    max_file_bytes: int
    batch_size: int
    delete_missing: bool
    progress: bool
    write_batch_size: int
    rebuild: bool
    wait: bool
    run_log: Path | None
    records_url: str | None
    cleaning: CleaningRules
    content_types: ContentTypeConfig | None
    engine: str
    ray_address: str | None
    ray_actors: int | None
    file_timeout: float | None
    file_memory_mb: int | None
    follow_symlinks_outside: bool
    allow_mass_delete: bool
    max_delete_share: float
    max_chunks_per_file: int | None
    retry_failed: bool
    strict: bool
    access_policy: AccessPolicy | None
    chunk_size: int | None
    chunk_overlap: int | None
    min_chunk_size: int
    unit: str
    context_prefix: bool
    split_levels: Sequence[int]
    strategy: str
    parent_chunk_size: int | None


def make_options(
    persist_dir: str | Path,
    collection: str,
    options: IngestOptions | None = None,
    **settings: Any,
) -> IngestOptions:
    """``IngestOptions`` from keyword settings (module docstring)."""
    if not isinstance(persist_dir, str | os.PathLike) or not str(persist_dir):
        raise TypeError(
            f"persist_dir must be the store's folder (a str or Path), got {persist_dir!r}"
        )
    if not isinstance(collection, str):
        raise TypeError(f"collection must be a name (str), got {collection!r}")
    base = options if options is not None else IngestOptions(Path(persist_dir), collection)
    run_names = {f.name for f in fields(IngestOptions)} - {"persist_dir", "collection", "split"}
    split_names = {f.name for f in fields(SplitSettings)}
    unknown = set(settings) - run_names - split_names - {"split"}
    if unknown:
        raise TypeError(
            f"ingest() got unknown option(s) {sorted(unknown)}; run options: "
            f"{sorted(run_names)}; split settings: {sorted(split_names)}"
        )
    split = settings.pop("split", base.split)
    split = replace(split, **{k: settings.pop(k) for k in list(settings) if k in split_names})
    if isinstance(split.split_levels, list):
        split = replace(split, split_levels=tuple(split.split_levels))
    return replace(
        base, persist_dir=Path(persist_dir), collection=collection, split=split, **settings
    )


def run(sources: Any, options: IngestOptions, report: RunReport | None = None) -> RunReport:
    """One run over ``sources`` with ready ``IngestOptions``; the ``RunReport`` (``report``
    when given: filled as the run goes, so a caller still has it when the run raises)."""
    paths, documents = split_sources(sources)
    if documents and options.engine != "local":
        raise ValueError(
            f"the {options.engine} engine reads files only: ingest loaders and Documents with "
            "the local engine (engine='local'), or save them as files first"
        )
    report = run_all(paths, options, documents, report)
    if options.strict:
        report.raise_for_failures()
    return report
