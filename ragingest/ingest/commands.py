"""The ``ragingest`` subcommands: arguments in, the run (``ragingest.run``) or a query out."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ragingest.loaders.cleaning import CleaningRules
from ragingest.splitters.content_types import ContentTypeConfig


def split_settings(args: argparse.Namespace, strategy: str = "heading", unit: str = "tokens"):
    """``SplitSettings`` from the splitting arguments (ingest, watch and inspect)."""
    from ragingest.splitters.factory import SplitSettings
    from ragingest.splitters.heading_first import DEFAULT_MIN_CHUNK_SIZE

    return SplitSettings(
        chunk_size=args.chunk_size,
        chunk_overlap=args.chunk_overlap,
        min_chunk_size=(
            DEFAULT_MIN_CHUNK_SIZE if args.min_chunk_size is None else args.min_chunk_size
        ),
        unit=unit,
        context_prefix=not args.no_context_prefix,
        strategy=strategy,
    )


def content_types(args: argparse.Namespace) -> ContentTypeConfig | None:
    return ContentTypeConfig.parse(args.content_type) if args.content_type else None


def ingest_options(args: argparse.Namespace):  # -> IngestOptions | None
    """``IngestOptions`` from the ingest/watch arguments; None (after saying why) when a path
    is missing."""
    from ragingest.run.options import IngestOptions

    split = split_settings(args)
    missing = [p for p in args.paths if not Path(p).exists()]
    if missing:
        print(f"ragingest: no such file or folder: {', '.join(missing)}", file=sys.stderr)
        return None
    return IngestOptions(
        persist_dir=args.persist_dir,
        collection=args.collection,
        model=args.model,
        split=split,
        include=args.include,
        exclude=args.exclude,
        max_file_bytes=int(args.max_file_mb * 2**20),
        cleaning=CleaningRules.parse(args.no_clean),
        content_types=content_types(args),
        progress=not args.no_progress,
        write_batch_size=max(1, args.batch_size),
        rebuild=args.rebuild,
        wait=args.wait,
        run_log=args.run_log,
        records_url=args.records_url,
        engine=args.engine,
        ray_address=args.ray_address,
        ray_actors=args.ray_actors or None,
    )


EXIT_LOCKED = 3  # another run is writing the collection


def ingest_command(args: argparse.Namespace) -> int:
    from ragingest.errors import LockedError
    from ragingest.run.runner import ingest

    options = ingest_options(args)
    if options is None:
        return 2
    try:
        report = ingest(args.paths, options)
    except LockedError as exc:
        print(f"ragingest: {exc}", file=sys.stderr)
        return EXIT_LOCKED
    if args.report:
        report.write(args.report)
    print(report.summary())
    return report.exit_code


def watch_command(args: argparse.Namespace) -> int:
    from ragingest.ingest.watch import parse_interval, watch

    interval = parse_interval(args.interval)
    options = ingest_options(args)
    if options is None:
        return 2

    def show(report) -> None:
        print(report.summary(), flush=True)

    try:
        return watch(args.paths, options, interval, args.max_runs or None, on_report=show)
    except KeyboardInterrupt:
        return 130


def status_command(args: argparse.Namespace) -> int:
    from ragingest.ingest.status import collection_status, render

    status = collection_status(
        args.persist_dir, args.collection, args.run_log, records_url=args.records_url
    )
    if args.json:
        print(json.dumps(status, ensure_ascii=False, indent=2))
    else:
        print(render(status))
    return 0


def query_command(args: argparse.Namespace) -> int:
    from ragingest.ingest.query import search

    hits = search(
        args.text,
        args.persist_dir,
        args.collection,
        args.k,
        args.where,
        args.model,
        records_url=args.records_url,
    )
    if args.json:
        print(json.dumps(hits, ensure_ascii=False, indent=2))
        return 0
    for rank, hit in enumerate(hits, 1):
        meta = hit["metadata"]
        print(
            f"{rank}. score {hit['score']:.3f}  {meta.get('source')}  "
            f"[{meta.get('section_path') or '-'}]"
        )
        print("   " + hit["text"][:300].replace("\n", "\n   "))
    if not hits:
        print("no hits")
    return 0


def inspect_command(args: argparse.Namespace) -> int:
    from ragingest.ingest.inspect import file_splitting, inspect_document, render_text

    splitting = file_splitting(
        split_settings(args, args.strategy, args.unit),
        args.model,
        cleaning=CleaningRules.parse(args.no_clean),
        content_types=content_types(args),
        max_file_bytes=int(args.max_file_mb * 2**20),
    )
    result, text = inspect_document(args.file, splitting, args.contains)
    if args.html:
        from ragingest.ingest.inspect_html import render_html

        settings = f"{args.strategy}, {args.unit}" + "".join(
            f", {name} {value}"
            for name, value in (
                ("size", args.chunk_size),
                ("overlap", args.chunk_overlap),
                ("min", args.min_chunk_size),
            )
            if value is not None
        )
        first = {**result, "chunks": [c for c in result["chunks"] if c["document"] == 0]}
        if len(result["documents"]) > 1:
            settings += f"; document 0 of {len(result['documents'])}"
        Path(args.html).write_text(render_html(first, text, settings=settings), "utf-8")
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=1))
    else:
        print(render_text(result))
    return 0


def evaluate_command(args: argparse.Namespace) -> int:
    from ragingest.evaluate.runner import run_cli

    return run_cli(args)


COMMANDS = {
    "evaluate": evaluate_command,
    "ingest": ingest_command,
    "query": query_command,
    "inspect": inspect_command,
    "watch": watch_command,
    "status": status_command,
}
