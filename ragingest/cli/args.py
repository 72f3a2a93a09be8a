"""The ``ragingest`` argument parser: every subcommand's options (``cli`` runs them)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ragingest import defaults as d
from ragingest.cli.args_evaluate import add_evaluate_parser
from ragingest.cli.trace_cmd import add_parser as add_trace_parser

EPILOG = """examples (run from a clone: examples/ is in it):
  ragingest ingest examples/ --persist-dir ./chroma_db --collection kb
  ragingest query "На сколько дней выдают альбом?" --persist-dir ./chroma_db --collection kb
  ragingest inspect examples/library_memo.md --strategy fixed --unit chars --chunk-size 120 \\
      --contains "три дня"
  ragingest watch examples/ --persist-dir ./chroma_db --collection kb --interval 10m
  ragingest status --persist-dir ./chroma_db --collection kb
  ragingest evaluate --corpus CORPUS_DIR --questions QUESTIONS.csv --html report.html
"""


def _positive(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be >= 0")
    return value


def _share(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError("must be between 0 and 1")
    return value


def _split_args(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("splitting (sizes in --unit, default model tokens)")
    group.add_argument(
        "--chunk-size",
        type=_positive,
        default=None,
        help=f"largest chunk (default: {d.CHUNK_SIZE} tokens, capped at the model's limit)",
    )
    group.add_argument(
        "--chunk-overlap",
        type=_positive,
        default=None,
        help="overlap between pieces of one long section "
        f"(default {round(d.CHUNK_SIZE * d.OVERLAP_RATIO)})",
    )
    group.add_argument(
        "--min-chunk-size",
        type=_positive,
        default=None,
        help=f"merge smaller pieces into a neighbour (default {d.MIN_CHUNK_SIZE}; 0 = never)",
    )
    group.add_argument(
        "--no-context-prefix",
        action="store_true",
        help="embed the chunk text alone, without its heading breadcrumb",
    )
    group.add_argument(
        "--model",
        default=None,
        help=f"embedding model: {d.MODEL} (default), "
        "sentence-transformers/all-MiniLM-L6-v2, or a local path",
    )


def build_parser() -> argparse.ArgumentParser:
    """The ``ragingest`` argument parser with all its subcommands (what ``--help`` shows)."""
    parser = argparse.ArgumentParser(
        prog="ragingest",
        description="Ingest documents into a Chroma collection for RAG: heading-first chunks, "
        "embeddings of a local sentence-transformers model (on ONNX Runtime by default), "
        "metadata for filtering and citing.",
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
        "is writing the collection; 4: the store is read-only; 5: the store is damaged "
        "(--rebuild repairs it); 6: the disk is full; 7: refused, nothing changed: the run "
        "would delete every source of the collection or more than --max-delete-share of them "
        "(a folder missing or empty?; --allow-mass-delete confirms); 8: a server (Chroma, the "
        "records database) can't be reached; 130: interrupted.",
    )
    _ingest_args(ing, paths="*")
    from ragingest.cli.loader_specs import add_loader_args

    add_loader_args(ing)
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
        "--max-runs",
        type=_positive,
        default=0,
        help="stop after N checks, the first ingest included, changed or not (default: never)",
    )

    sts = sub.add_parser(
        "status", help="chunk and file counts, model, settings and last run of a collection"
    )
    _store_args(sts, persist_required=False)
    sts.add_argument("--run-log", metavar="FILE", help="the run log (default: in --persist-dir)")
    sts.add_argument("--json", action="store_true", help="print JSON")

    qry = sub.add_parser("query", help="search a collection")
    qry.add_argument("text", help="the question")
    _store_args(qry, persist_required=False)
    qry.add_argument("-k", type=int, default=d.TOP_K, help=f"number of hits (default {d.TOP_K})")
    qry.add_argument(
        "--where",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="metadata filter, repeatable: source=a.md, price<=5000",
    )
    qry.add_argument("--model", default=None, help="default: the collection's model")
    qry.add_argument(
        "--hybrid",
        action=argparse.BooleanOptionalAction,
        default=d.HYBRID,
        help="fuse BM25 over stemmed words with the vectors, which finds codes and numbers "
        "such as E-07 (default; --no-hybrid: vectors only)",
    )
    qry.add_argument("--json", action="store_true", help="print JSON")

    ins = sub.add_parser("inspect", help="show how a file is cut (no embedding)")
    ins.add_argument("file")
    ins.add_argument(
        "--strategy",
        choices=d.STRATEGIES,
        default=d.STRATEGY,
        help="heading-first (default); semantic: heading-first with topic-shift boundaries "
        "for text without structure (embeds sentences); fixed windows; LangChain recursive",
    )
    ins.add_argument("--unit", choices=d.UNITS, default=d.UNIT)
    _split_args(ins)
    _file_args(ins)
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

    add_evaluate_parser(sub, _positive)
    add_trace_parser(sub, lambda parser: _store_args(parser, persist_required=False))
    return parser


def _store_args(parser: argparse.ArgumentParser, persist_required: bool = True) -> None:
    if persist_required:
        parser.add_argument("--persist-dir", required=True, type=Path, help="Chroma directory")
    else:
        parser.add_argument(
            "--persist-dir",
            type=Path,
            default=None,
            help="Chroma directory (not needed with --chroma-host and a PostgreSQL "
            "--records-url: everything a query reads is on those servers)",
        )
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


def _file_args(parser: argparse.ArgumentParser) -> None:
    """How files are read and cut: shared by ingest, watch and inspect (same cut)."""
    parser.add_argument(
        "--max-file-mb",
        type=float,
        default=d.MAX_FILE_MB,
        help=f"refuse larger files (default {d.MAX_FILE_MB})",
    )
    parser.add_argument(
        "--file-timeout",
        type=float,
        default=d.FILE_TIMEOUT,
        metavar="SECONDS",
        help="stop parsing a file after this long and report it failed "
        f"(default {d.FILE_TIMEOUT:g}; 0: none)",
    )
    parser.add_argument(
        "--file-memory-mb",
        type=_positive,
        default=None,
        metavar="MB",
        help="stop parsing a file whose parser process and the processes it starts (pandoc) "
        "use more resident memory than this (the parser libraries count: ~500 MB once HTML "
        "is parsed) and report it failed (default: the smaller of 2048 and half the "
        "machine's memory; 0: no bound)",
    )
    parser.add_argument(
        "--follow-symlinks-outside",
        action="store_true",
        help="follow symlinks that lead out of the ingested folders (default: skip them)",
    )
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


def _ingest_args(parser: argparse.ArgumentParser, paths: str = "+") -> None:
    """The options of ``ingest``, shared by ``watch``."""
    parser.add_argument(
        "--retry-failed",
        action="store_true",
        help="parse again the files that failed past a bound (--file-timeout, "
        "--file-memory-mb, size, --max-chunks-per-file) with the same content (default: "
        "reported as failed, not tried again until they change)",
    )
    parser.add_argument(
        "--max-chunks-per-file",
        type=_positive,
        default=d.MAX_CHUNKS_PER_FILE,
        metavar="N",
        help="report a file that splits into more chunks than this as failed instead of "
        f"embedding it for an hour (default {d.MAX_CHUNKS_PER_FILE}; 0: no bound)",
    )
    parser.add_argument(
        "paths",
        nargs=paths,
        metavar="PATH",
        help="files or folders (with none and no --loader: the [[sources]] of ./.ragingest.toml)"
        if paths == "*"
        else "files or folders",
    )
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
    _file_args(parser)
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar (there is one only when stderr is a terminal)",
    )
    group = parser.add_argument_group("re-indexing")
    group.add_argument(
        "--rebuild",
        action="store_true",
        help="when the model or splitter settings differ from the collection's, rebuild it "
        "into a new collection swapped in when complete (without it such a run is refused)",
    )
    group.add_argument(
        "--allow-mass-delete",
        action="store_true",
        help="let this run delete every source of the collection, or more than "
        "--max-delete-share of them (without it such a run is refused, exit 7)",
    )
    group.add_argument(
        "--max-delete-share",
        type=_share,
        default=d.MAX_DELETE_SHARE,
        metavar="FRACTION",
        help="the share of the collection's sources a run may delete "
        f"(default {d.MAX_DELETE_SHARE}); "
        "a run that would delete more, or all, is refused before it changes anything",
    )
    group.add_argument(
        "--wait",
        action="store_true",
        help="wait for another run writing the collection instead of failing (exit 3)",
    )
    group.add_argument(
        "--batch-size",
        type=_positive,
        default=d.WRITE_BATCH_SIZE,
        metavar="N",
        help=f"chunks written per batch, whole files (default {d.WRITE_BATCH_SIZE})",
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
        choices=d.ENGINES,
        default=d.ENGINE,
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
