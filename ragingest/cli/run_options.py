"""The settings of a run from the command line's arguments: ``SplitSettings``, the cleaning
rules, the content-type routing and the whole ``IngestOptions`` (ingest, watch, inspect)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the types only: each function imports what it builds, so --help stays fast
    from ragingest.loaders.cleaning import CleaningRules
    from ragingest.pipeline.options import IngestOptions
    from ragingest.splitters.content_types import ContentTypeConfig
    from ragingest.splitters.factory import SplitSettings


def split_settings(
    args: argparse.Namespace, strategy: str = "heading", unit: str = "tokens"
) -> SplitSettings:
    """``SplitSettings`` from the splitting arguments (ingest, watch and inspect)."""
    from ragingest.defaults import MIN_CHUNK_SIZE
    from ragingest.splitters.factory import SplitSettings

    return SplitSettings(
        chunk_size=args.chunk_size,
        chunk_overlap=args.chunk_overlap,
        min_chunk_size=(MIN_CHUNK_SIZE if args.min_chunk_size is None else args.min_chunk_size),
        unit=unit,
        context_prefix=not args.no_context_prefix,
        strategy=strategy,
    )


def cleaning_rules(args: argparse.Namespace) -> CleaningRules:
    """The cleaning rules of ``--no-clean`` (all on unless turned off), with how scans are
    read (``--ocr``, ``--ocr-lang``, ``--ocr-max-pages``)."""
    from ragingest.loaders.cleaning import CleaningRules
    from ragingest.loaders.ocr import OcrSettings

    ocr = OcrSettings(args.ocr, args.ocr_lang, args.ocr_max_pages)
    return CleaningRules.parse(args.no_clean, ocr)


def content_types(args: argparse.Namespace) -> ContentTypeConfig | None:
    """The ``--content-type`` routing rules, ``None`` when none are given."""
    from ragingest.splitters.content_types import ContentTypeConfig

    return ContentTypeConfig.parse(args.content_type) if args.content_type else None


def ingest_options(args: argparse.Namespace) -> IngestOptions | None:
    """``IngestOptions`` from the ingest/watch arguments; None (after saying why) when a path
    is missing."""
    from ragingest.cli.loader_specs import config_access_policy
    from ragingest.loaders.bounded import DEFAULT_FILE_MEMORY_MB
    from ragingest.pipeline.checks import require_output_folder
    from ragingest.pipeline.options import IngestOptions

    split = split_settings(args)
    # before the work; the persist dir is made by the run
    require_output_folder(getattr(args, "report", None), "--report", args.persist_dir)
    missing = [p for p in args.paths if not Path(p).exists()]
    if missing:
        print(f"ragingest: no such file or folder: {', '.join(missing)}", file=sys.stderr)
        return None
    return IngestOptions(
        persist_dir=args.persist_dir,
        collection=args.collection,
        backend=args.backend,
        model=args.model,
        split=split,
        include=args.include,
        exclude=args.exclude,
        max_file_bytes=int(args.max_file_mb * 2**20),
        cleaning=cleaning_rules(args),
        content_types=content_types(args),
        progress=not args.no_progress,  # drawn only on a terminal (pipeline.runner, engine_ray)
        write_batch_size=max(1, args.write_batch),
        rebuild=args.rebuild,
        wait=args.wait,
        run_log=args.run_log,
        records_url=args.records_url,
        engine=args.engine,
        ray_address=args.ray_address,
        ray_actors=args.ray_actors or None,
        file_timeout=args.file_timeout or None,
        file_memory_mb=DEFAULT_FILE_MEMORY_MB
        if args.file_memory_mb is None
        else args.file_memory_mb or None,
        follow_symlinks_outside=args.follow_symlinks_outside,
        max_chunks_per_file=args.max_chunks_per_file or None,
        retry_failed=args.retry_failed,
        allow_mass_delete=args.allow_mass_delete,
        max_delete_share=args.max_delete_share,
        access_policy=config_access_policy(
            args.paths, getattr(args, "loaders", None) or [], args.config
        ),
    )
