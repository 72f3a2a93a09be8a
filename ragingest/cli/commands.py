"""The ``ragingest`` subcommands: arguments in, the run (``ragingest.pipeline``) or a query out."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragingest.cli import faults
from ragingest.cli.run_options import cleaning_rules, content_types, ingest_options, split_settings
from ragingest.errors import EXIT_LOCKED, EXIT_OK, EXIT_USAGE

if TYPE_CHECKING:  # the types only: each command imports what it runs, so --help stays fast
    from ragingest.pipeline.report import RunReport


def ingest_command(args: argparse.Namespace) -> int:
    """Run ``ragingest ingest``; returns the exit status (0 ok, 1 a file failed or went in
    partly, 2 bad arguments, 3 the collection is locked by another run)."""
    from ragingest.cli.loader_specs import cli_sources
    from ragingest.errors import EXIT_REFUSED, LockedError, RefusedRunError
    from ragingest.pipeline.api import run
    from ragingest.pipeline.report import RunReport

    options = ingest_options(args)
    if options is None:
        return EXIT_USAGE
    sources = cli_sources(args.paths, args.loaders, args.config)
    if not sources:
        print(
            "ragingest: nothing to ingest: give a PATH, a --loader, or [[sources]] in "
            "./.ragingest.toml",
            file=sys.stderr,
        )
        return EXIT_USAGE
    report = RunReport()
    try:
        try:
            run(sources, options, report)
        except Exception as exc:
            persist, kind = options.persist_dir, options.backend
            if not faults.recover_damaged(exc, persist, options.rebuild, kind):
                raise
            report = run(sources, options)
    except LockedError as exc:
        print(f"ragingest: {exc}", file=sys.stderr)
        return EXIT_LOCKED
    except RefusedRunError as exc:
        print(f"ragingest: {exc}", file=sys.stderr)
        if args.report:
            report.write(args.report)
        return EXIT_REFUSED if report.refused else EXIT_USAGE
    except Exception as exc:  # a store fault: said in one line, the report as far as it got
        code = faults.report_fault(exc, options.persist_dir, args.report, report, options.backend)
        if code is None:
            raise
        return code
    if args.report:
        report.write(args.report)
    print(report.summary())
    return report.exit_code


def watch_command(args: argparse.Namespace) -> int:
    """Run ``ragingest watch`` until interrupted; returns the exit status (2 for bad arguments)."""
    from ragingest.cli.watch import parse_interval, watch

    interval = parse_interval(args.interval)
    options = ingest_options(args)
    if options is None:
        return EXIT_USAGE

    def show(report: RunReport) -> None:
        print(report.summary(), flush=True)

    try:
        return watch(args.paths, options, interval, args.max_runs or None, on_report=show)
    except KeyboardInterrupt as exc:
        return faults.interrupted(exc)


def status_command(args: argparse.Namespace) -> int:
    """Print ``ragingest status``; returns the exit status."""
    from ragingest.cli.status import collection_status, render

    with readable(args) as persist:
        status = collection_status(
            persist, args.collection, args.run_log, args.records_url, args.backend
        )
    if persist is not None and persist != args.persist_dir:  # say where the store really is
        status = json.loads(json.dumps(status).replace(str(persist), str(args.persist_dir)))
    if args.json:
        print(json.dumps(status, ensure_ascii=False, indent=2))
    else:
        print(render(status))
    return EXIT_OK


def readable(args: argparse.Namespace) -> contextlib.AbstractContextManager[Path | None]:
    """``--persist-dir`` as a reader may open it: its store kind's ``readable``
    (``port.StoreFiles``: a temporary copy of a store that can't be written), or as it is."""
    from ragingest.vectorstore.backends import store_files

    files = store_files(args.backend)
    if files is None:
        return contextlib.nullcontext(args.persist_dir)
    return files.readable(args.persist_dir)


def query_command(args: argparse.Namespace) -> int:
    """Run ``ragingest query`` and print the hits; returns the exit status."""
    from ragingest.cli.arg_groups import principals_of
    from ragingest.cli.terminal import terminal_safe as safe
    from ragingest.retrieval.query import RANKS, search

    if args.max_context_tokens is not None:
        from ragingest.cli.query_context import context_command

        return context_command(args)
    with readable(args) as persist:
        hits = search(
            args.text,
            persist,
            args.collection,
            args.k,
            args.where,
            args.model,
            records_url=args.records_url,
            hybrid=args.hybrid,
            fusion=args.fusion,
            principals=principals_of(args),
        )
    if args.json:
        print(json.dumps(hits, ensure_ascii=False, indent=2))
        return EXIT_OK
    for rank, hit in enumerate(hits, 1):
        meta = hit["metadata"]
        ranks = "  (vectors #{}, words #{})".format(*(hit.get(r) or "-" for r in RANKS))
        ranks = ranks if args.hybrid else ""
        first, last = meta.get("page_start"), meta.get("page_end")
        pages = f"  p. {first}" if first is not None and last in (None, first) else ""
        pages = pages or (f"  pp. {first}-{last}" if first is not None else "")
        print(
            f"{rank}. score {hit['score']:.3f}{ranks}  {safe(str(meta.get('source')))}{pages}  "
            f"[{safe(str(meta.get('section_path') or '-'))}]"
        )
        print("   " + safe(hit["text"][:300]).replace("\n", "\n   "))
    if not hits:
        print("no hits")
    return EXIT_OK


def _scan_pictures(path: Path, document: dict[str, Any]) -> dict[int, bytes]:
    """The OCR'd pages of ``document`` (inspect's description) as PNG images, as displayed
    (the frame of their boxes)."""
    from ragingest.loaders.base import read_bytes
    from ragingest.loaders.scan import page_pictures

    pages = [int(page) for page in document.get("scan_pages") or {}]
    if not pages:
        return {}
    return page_pictures(read_bytes(path), path.suffix.lower() == ".pdf", pages)


def inspect_command(args: argparse.Namespace) -> int:
    """Run ``ragingest inspect`` (the split of one file, nothing stored); returns the exit
    status."""
    from ragingest.cli.inspect import file_splitting, inspect_document, render_text

    splitting = file_splitting(
        split_settings(args, args.strategy, args.unit),
        args.model,
        cleaning=cleaning_rules(args),
        content_types=content_types(args),
        max_file_bytes=int(args.max_file_mb * 2**20),
        file_timeout=args.file_timeout or 0,
        max_chunks=args.max_chunks_per_file or None,
    )
    result, text = inspect_document(args.file, splitting, args.contains, args.corpus)
    if args.html:
        from ragingest.cli.inspect_html import render_html

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
        pictures = _scan_pictures(Path(args.file), result["documents"][0]) if text else {}
        page = render_html(first, text, settings=settings, pictures=pictures)
        Path(args.html).write_text(page, "utf-8")
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=1))
    else:
        print(render_text(result))
    return EXIT_OK


def evaluate_command(args: argparse.Namespace) -> int:
    """Run ``ragingest evaluate``; returns its exit status."""
    from ragingest.evaluate.runner import run_cli

    return run_cli(args)


def trace_command(args: argparse.Namespace) -> int:
    """Run ``ragingest trace``; returns its exit status."""
    from ragingest.cli.trace_cmd import run

    return run(args)


COMMANDS = {
    "evaluate": evaluate_command,
    "trace": trace_command,
    "ingest": ingest_command,
    "query": query_command,
    "inspect": inspect_command,
    "watch": watch_command,
    "status": status_command,
}
