"""The ``ragingest`` argument parser: every subcommand and its options (``cli`` runs them);
the option groups they share are in ``arg_groups`` and ``args_ingest``."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

from ragingest import defaults as d
from ragingest.cli.arg_groups import (
    add_file_args,
    add_principal_args,
    add_split_args,
    add_store_args,
    non_negative,
)
from ragingest.cli.args_evaluate import add_evaluate_parser
from ragingest.cli.args_ingest import add_ingest_args
from ragingest.cli.trace_cmd import add_parser as add_trace_parser

Subparsers = Any  # argparse._SubParsersAction, private in typeshed

EPILOG = """examples (run from a clone: examples/ is in it):
  ragingest ingest examples/ --persist-dir ./chroma_db --collection kb
  ragingest query "На сколько дней выдают альбом?" --persist-dir ./chroma_db --collection kb
  ragingest inspect examples/library_memo.md --strategy fixed --unit chars --chunk-size 120 \\
      --contains "три дня"
  ragingest watch examples/ --persist-dir ./chroma_db --collection kb --interval 10m
  ragingest status --persist-dir ./chroma_db --collection kb
  ragingest evaluate --corpus CORPUS_DIR --questions QUESTIONS.csv --html report.html
"""


def _add_ingest(sub: Subparsers) -> None:
    """``ingest``: load, split, embed and store."""
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
    add_ingest_args(ing, paths="*")
    from ragingest.cli.loader_specs import add_loader_args

    add_loader_args(ing)
    ing.add_argument("--report", metavar="FILE", help="write the JSON run report here")


def _add_watch(sub: Subparsers) -> None:
    """``watch``: ingest again whenever the files change."""
    wat = sub.add_parser(
        "watch",
        help="re-run ingest whenever the files change",
        description="Ingest now, then check the files every --interval and ingest again "
        "when any is new, changed or gone. Takes every ingest option.",
    )
    add_ingest_args(wat)
    wat.add_argument(
        "--config",
        metavar="FILE",
        help="the operator's config: who may read each document ([[access]] rules, "
        "[access_policy])",
    )
    wat.add_argument(
        "--interval", default="10m", help="time between checks: 30s, 10m, 1h (default 10m)"
    )
    wat.add_argument(
        "--max-runs",
        type=non_negative,
        default=0,
        help="stop after N checks, the first ingest included, changed or not (default: never)",
    )


def _add_status(sub: Subparsers) -> None:
    """``status``: what a collection holds and its last run."""
    sts = sub.add_parser(
        "status", help="chunk and file counts, model, settings and last run of a collection"
    )
    add_store_args(sts, persist_required=False, backend=True)
    sts.add_argument("--run-log", metavar="FILE", help="the run log (default: in --persist-dir)")
    sts.add_argument("--json", action="store_true", help="print JSON")


def _add_query(sub: Subparsers) -> None:
    """``query``: search a collection."""
    qry = sub.add_parser("query", help="search a collection")
    qry.add_argument("text", help="the question")
    add_store_args(qry, persist_required=False, backend=True)
    qry.add_argument("-k", type=int, default=d.TOP_K, help=f"number of hits (default {d.TOP_K})")
    qry.add_argument(
        "--where",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="metadata filter, repeatable: source=a.md, price<=5000; true/false and numbers "
        "are typed, a quoted value is text: 'flag=\"true\"', \"code='007'\"",
    )
    qry.add_argument("--model", default=None, help="default: the collection's model")
    qry.add_argument(
        "--hybrid",
        action=argparse.BooleanOptionalAction,
        default=d.HYBRID,
        help="fuse BM25 over stemmed words with the vectors, which finds codes and numbers "
        "such as E-07 (default; --no-hybrid: vectors only)",
    )
    qry.add_argument(
        "--fusion",
        choices=d.FUSIONS,
        default=d.FUSION,
        help=f"how the two rankings become one: {d.FUSION} (default: each list's scores scaled "
        "by their distribution and summed) or rrf (reciprocal ranks)",
    )
    qry.add_argument(
        "--max-context-tokens",
        type=int,
        default=None,
        metavar="N",
        help="print the context an app's retriever gives the generator within N tokens of the "
        "embedding model (passages whole, best first, up to -k of them) instead of the hits",
    )
    qry.add_argument("--json", action="store_true", help="print JSON")
    add_principal_args(qry)


def _add_inspect(sub: Subparsers) -> None:
    """``inspect``: how a file is cut."""
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
    add_split_args(ins)
    add_file_args(ins)
    ins.add_argument(
        "--contains",
        action="append",
        default=[],
        metavar="TEXT",
        help="list the chunks holding this text whole (repeatable)",
    )
    ins.add_argument(
        "--max-chunks-per-file",
        type=non_negative,
        default=d.MAX_CHUNKS_PER_FILE,
        metavar="N",
        help=f"refuse a file that splits into more chunks, as ingest does (default "
        f"{d.MAX_CHUNKS_PER_FILE}; 0: no bound)",
    )
    ins.add_argument(
        "--corpus",
        metavar="FOLDER",
        help="clean the file as ingesting FOLDER (which holds it) cleans it: its copies and the "
        "boilerplate repeated across FOLDER's files, each removal shown with its rule",
    )
    ins.add_argument("--json", action="store_true", help="print JSON")
    ins.add_argument(
        "--html",
        metavar="OUT.html",
        help="also write the boundary figure: chunks on a 0…length scale, overlaps hatched, "
        "the --contains sentences marked",
    )


def _add_evaluate(sub: Subparsers) -> None:
    add_evaluate_parser(sub, non_negative)


def _add_trace(sub: Subparsers) -> None:
    add_trace_parser(sub, lambda parser: add_store_args(parser, persist_required=False))


COMMANDS: dict[str, Callable[[Subparsers], None]] = {  # in --help's order
    "ingest": _add_ingest,
    "watch": _add_watch,
    "status": _add_status,
    "query": _add_query,
    "inspect": _add_inspect,
    "evaluate": _add_evaluate,
    "trace": _add_trace,
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``ragingest`` argument parser with all its subcommands (what ``--help`` shows), or
    with ``command``'s alone when it names one: a run parses one command, and building every
    other one's options costs ~40 ms of a cold ``query``."""
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
    for name, add in COMMANDS.items():
        if command is None or command not in COMMANDS or name == command:
            add(sub)
    return parser


def command_of(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` names (its first word that is not an option), else None."""
    return next((arg for arg in argv if not arg.startswith("-")), None)
