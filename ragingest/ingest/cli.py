"""The ``ragingest`` command line. Exit codes: 0 ok, 1 some files failed, 2 usage error."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any

from ragingest.errors import RagIngestError
from ragingest.loaders.cleaning import CleaningRules
from ragingest.splitters.content_types import ContentTypeConfig

EPILOG = """examples:
  ragingest ingest docs/ --persist-dir ./chroma_db --collection kb
  ragingest query "На сколько дней выдают альбом?" --persist-dir ./chroma_db --collection kb
  ragingest inspect memo.md --strategy fixed --unit chars --chunk-size 120 --contains "три дня"
  ragingest watch docs/ --persist-dir ./chroma_db --collection kb --interval 10m
  ragingest status --persist-dir ./chroma_db --collection kb
  ragingest evaluate --corpus eval/corpora --questions eval/questions.csv --html report.html
"""


def _positive(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be >= 0")
    return value


def _split_args(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("splitting (sizes in --unit, default model tokens)")
    group.add_argument(
        "--chunk-size",
        type=_positive,
        default=None,
        help="largest chunk (default: 200 tokens, capped at the model's limit)",
    )
    group.add_argument(
        "--chunk-overlap",
        type=_positive,
        default=None,
        help="overlap between pieces of one long section (default 0)",
    )
    group.add_argument(
        "--min-chunk-size",
        type=_positive,
        default=None,
        help="merge smaller pieces into a neighbour (default 100; 0 = never)",
    )
    group.add_argument(
        "--model",
        default=None,
        help="embedding model: intfloat/multilingual-e5-small (default), "
        "sentence-transformers/all-MiniLM-L6-v2, or a local path",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ragingest",
        description="Ingest documents into a Chroma collection for RAG: heading-first chunks, "
        "sentence-transformers embeddings, metadata for filtering and citing.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log more")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    ing = sub.add_parser(
        "ingest",
        help="load, split, embed and store files",
        description="Ingest files and folders into a collection. Re-running "
        "skips unchanged files and chunks and removes stale ones. Exit 0: all went in; "
        "1: some files failed; 2: usage error or model/settings mismatch; 3: another run "
        "is writing the collection.",
    )
    _ingest_args(ing)
    ing.add_argument("--report", metavar="FILE", help="write the JSON run report here")

    wat = sub.add_parser(
        "watch",
        help="re-run ingest whenever the files change",
        description="Ingest now, then check the files every --interval and ingest again "
        "when any is new, changed or gone. Takes every ingest option.",
    )
    _ingest_args(wat)
    wat.add_argument(
        "--interval", default="10m", help="time between checks: 30s, 10m, 1h (default 10m)"
    )
    wat.add_argument(
        "--max-runs", type=_positive, default=0, help="stop after N ingest runs (default: never)"
    )

    sts = sub.add_parser(
        "status", help="chunk and file counts, model, settings and last run of a collection"
    )
    _store_args(sts)
    sts.add_argument("--run-log", metavar="FILE", help="the run log (default: in --persist-dir)")
    sts.add_argument("--json", action="store_true", help="print JSON")

    qry = sub.add_parser("query", help="search a collection")
    qry.add_argument("text", help="the question")
    _store_args(qry)
    qry.add_argument("-k", type=int, default=4, help="number of hits (default 4)")
    qry.add_argument(
        "--where",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="metadata filter, repeatable: source=a.md, price<=5000",
    )
    qry.add_argument("--model", default=None, help="default: the collection's model")
    qry.add_argument("--json", action="store_true", help="print JSON")

    ins = sub.add_parser("inspect", help="show how a file is cut (no embedding)")
    ins.add_argument("file")
    ins.add_argument(
        "--strategy",
        choices=("heading", "semantic", "fixed", "recursive"),
        default="heading",
        help="heading-first (default); semantic: heading-first with topic-shift boundaries "
        "for text without structure (embeds sentences); fixed windows; LangChain recursive",
    )
    ins.add_argument("--unit", choices=("tokens", "chars", "words"), default="tokens")
    _split_args(ins)
    ins.add_argument(
        "--contains",
        action="append",
        default=[],
        metavar="TEXT",
        help="list the chunks holding this text whole (repeatable)",
    )
    ins.add_argument("--json", action="store_true", help="print JSON")
    ins.add_argument(
        "--html",
        metavar="OUT.html",
        help="also write the boundary figure: chunks on a 0…length scale, overlaps hatched, "
        "the --contains sentences marked",
    )

    _evaluate_args(sub)
    return parser


def _evaluate_args(sub: Any) -> None:
    ev = sub.add_parser(
        "evaluate",
        help="score chunking configurations on a question set (recall, precision, IoU, ...)",
        description="Cut every corpus file with each configuration, put all chunks in a fresh "
        "Chroma collection, retrieve the top k for every question and score the hits against "
        "the reference excerpts (Chroma's chunking metrics). The default configuration and "
        "LangChain's RecursiveCharacterTextSplitter baseline (same tokenizer) are always in.",
    )
    ev.add_argument("--corpus", required=True, type=Path, help="folder of .md/.txt files")
    ev.add_argument(
        "--questions",
        required=True,
        type=Path,
        help="CSV or JSONL: question, references (JSON [{content,start_index,end_index}]), "
        "corpus_id (file name without suffix)",
    )
    ev.add_argument("--model", default=None, help="embedding model (default: the product's)")
    ev.add_argument("-k", type=int, default=5, help="hits per question (default 5)")
    ev.add_argument(
        "--sweep",
        nargs="+",
        default=[],
        metavar="AXIS=V1,V2",
        help="grid of configurations: strategy=heading,semantic,recursive,fixed,semchunk,chonkie "
        "chunk_size=N,.. chunk_overlap=N,.. min_chunk_size=N,.. context_prefix=on,off",
    )
    ev.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="SPEC",
        help="one more configuration, e.g. heading:size=128,overlap=0,min=32 (repeatable)",
    )
    ev.add_argument(
        "--baseline-size",
        type=_positive,
        default=None,
        help="chunk size of the recursive baseline (default: the default's chunk size)",
    )
    ev.add_argument(
        "--no-embed",
        action="store_true",
        help="no model: chunk statistics and precision_omega only",
    )
    ev.add_argument(
        "--cache", metavar="FILE", help="keep embeddings in this SQLite file across runs"
    )
    ev.add_argument("--json", action="store_true", help="print JSON")
    ev.add_argument("--html", metavar="REPORT.html", help="write an HTML report with plots")
    ev.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    from ragingest.vectorstore.server import add_server_args

    add_server_args(ev)


def _store_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--persist-dir", required=True, type=Path, help="Chroma directory")
    parser.add_argument("--collection", required=True, help="collection name")
    parser.add_argument(
        "--records-url",
        metavar="URL",
        default=None,
        help="SQLAlchemy URL of the records database (record manager, file states, aliases; "
        "with PostgreSQL also the writer lock): postgresql+psycopg://USER@HOST:PORT/DB for "
        "writers on several machines; default: $RAGINGEST_RECORDS_URL, else "
        "sqlite:///PERSIST_DIR/ragingest_records.sqlite",
    )
    from ragingest.vectorstore.server import add_server_args

    add_server_args(parser)


def _ingest_args(parser: argparse.ArgumentParser) -> None:
    """The options of ``ingest``, shared by ``watch``."""
    parser.add_argument("paths", nargs="+", metavar="PATH", help="files or folders")
    _store_args(parser)
    _split_args(parser)
    parser.add_argument(
        "--include",
        action="append",
        default=[],
        metavar="GLOB",
        help="only files matching (repeatable), e.g. '*.md'",
    )
    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="skip files matching (repeatable)",
    )
    parser.add_argument("--max-file-mb", type=float, default=32, help="refuse larger files")
    parser.add_argument(
        "--no-clean",
        action="append",
        default=[],
        metavar="RULE",
        help="switch a cleaning rule off (repeatable): headers_footers, page_numbers, toc, "
        "empty_pages, boilerplate, quotes, signatures, or all",
    )
    parser.add_argument(
        "--content-type",
        action="append",
        default=[],
        metavar="GLOB=TYPE",
        help="force a content type for matching files (repeatable), e.g. 'faq/*.md=faq'; "
        "default: .ragingest.toml [content_types] in the root, else auto-detected",
    )
    parser.add_argument(
        "--no-context-prefix",
        action="store_true",
        help="embed the chunk text alone, without its heading breadcrumb",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    group = parser.add_argument_group("re-indexing")
    group.add_argument(
        "--rebuild",
        action="store_true",
        help="when the model or splitter settings differ from the collection's, rebuild it "
        "into a new collection swapped in when complete (without it such a run is refused)",
    )
    group.add_argument(
        "--wait",
        action="store_true",
        help="wait for another run writing the collection instead of failing (exit 3)",
    )
    group.add_argument(
        "--batch-size",
        type=_positive,
        default=256,
        metavar="N",
        help="chunks written per batch, whole files (default 256)",
    )
    group.add_argument(
        "--run-log",
        type=Path,
        metavar="FILE",
        help="append one JSON line per run here (default: ragingest_runs.jsonl in --persist-dir)",
    )
    engine = parser.add_argument_group("engine")
    engine.add_argument(
        "--engine",
        choices=("local", "ray"),
        default="local",
        help="local (default) or ray: load/split as Ray Data map tasks, embed in an actor pool",
    )
    engine.add_argument(
        "--ray-address",
        metavar="HOST:PORT",
        help="a running Ray cluster (default: start a local Ray runtime on 127.0.0.1)",
    )
    engine.add_argument(
        "--ray-actors",
        type=_positive,
        default=None,
        metavar="N",
        help="embedding actors, 0.5 CPU each (default: one per CPU of the cluster)",
    )


def _ingest_options(args: argparse.Namespace):  # -> IngestOptions | None
    """``IngestOptions`` from the ingest/watch arguments; None (after saying why) when a path
    is missing."""
    from ragingest.ingest.pipeline import IngestOptions, SplitSettings

    split = SplitSettings(
        chunk_size=args.chunk_size,
        chunk_overlap=args.chunk_overlap,
        min_chunk_size=100 if args.min_chunk_size is None else args.min_chunk_size,
        context_prefix=not args.no_context_prefix,
    )
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
        content_types=ContentTypeConfig.parse(args.content_type) if args.content_type else None,
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


def _cmd_ingest(args: argparse.Namespace) -> int:
    from ragingest.errors import LockedError
    from ragingest.ingest.pipeline import ingest

    options = _ingest_options(args)
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


def _cmd_watch(args: argparse.Namespace) -> int:
    from ragingest.ingest.watch import parse_interval, watch

    interval = parse_interval(args.interval)
    options = _ingest_options(args)
    if options is None:
        return 2

    def show(report) -> None:
        print(report.summary(), flush=True)

    try:
        return watch(args.paths, options, interval, args.max_runs or None, on_report=show)
    except KeyboardInterrupt:
        return 130


def _cmd_status(args: argparse.Namespace) -> int:
    from ragingest.ingest.status import collection_status, render

    status = collection_status(
        args.persist_dir, args.collection, args.run_log, records_url=args.records_url
    )
    if args.json:
        print(json.dumps(status, ensure_ascii=False, indent=2))
    else:
        print(render(status))
    return 0


def _cmd_query(args: argparse.Namespace) -> int:
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


def _cmd_inspect(args: argparse.Namespace) -> int:
    from ragingest.ingest.inspect import inspect_document, make_splitter, render_text

    splitter = make_splitter(
        args.strategy,
        args.unit,
        args.chunk_size,
        args.chunk_overlap,
        args.min_chunk_size,
        args.model,
    )
    result, text = inspect_document(args.file, splitter, args.contains)
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
        Path(args.html).write_text(render_html(result, text, settings=settings), "utf-8")
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=1))
    else:
        print(render_text(result))
    return 0


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from ragingest.evaluate.runner import run_cli

    return run_cli(args)


COMMANDS = {
    "evaluate": _cmd_evaluate,
    "ingest": _cmd_ingest,
    "query": _cmd_query,
    "inspect": _cmd_inspect,
    "watch": _cmd_watch,
    "status": _cmd_status,
}


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="ragingest: %(message)s"
    )
    from ragingest.vectorstore.server import server_from_args, use_server

    try:
        with use_server(server_from_args(args)):
            return COMMANDS[args.command](args)
    except (RagIngestError, ValueError) as exc:
        print(f"ragingest: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        from sqlalchemy.exc import OperationalError

        if not isinstance(exc, OperationalError):
            raise
        # the records database can't be reached (a --records-url server down, a bad host)
        print(f"ragingest: records database: {exc.orig or exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
