"""The ``trace`` subcommand: its arguments and its exit codes (0: every checkpoint held;
1: a checkpoint failed, named with what to try)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ragingest import defaults as d
from ragingest.cli.arg_groups import add_principal_args
from ragingest.errors import EXIT_FILES_FAILED, EXIT_OK

HELP = "follow an expected text from the source to the answer: where was it lost?"
EPILOG = """example:
  ragingest trace "На сколько дней выдают альбом с красной наклейкой?" \\
      --expect "срок выдачи составляет три дня" \\
      --persist-dir ./chroma_db --collection examples --source examples
"""


def add_parser(sub: Any, store_args: Any) -> None:
    """Register ``trace``; ``store_args`` adds --persist-dir/--collection and the server
    options shared with ``query``."""
    trc = sub.add_parser(
        "trace",
        help=HELP,
        description="Check an expected text at five checkpoints: in the loaded source, "
        "held whole by a chunk (with its heading), retrieved within k, in the final "
        "context (after parent expansion, de-duplication and the budget), in the answer. "
        "Exit 0: all held; 1: names the first checkpoint that failed and what to try.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    trc.add_argument("question")
    trc.add_argument(
        "--expect", action="append", required=True, metavar="TEXT",
        help="a text the answer needs (repeatable): a rule, its exception",
    )
    store_args(trc)
    trc.add_argument(
        "-k", type=int, default=d.TRACE_K, help=f"passages in the context (default {d.TRACE_K})"
    )
    trc.add_argument(
        "--hybrid", action=argparse.BooleanOptionalAction, default=d.HYBRID,
        help="vectors + BM25 words, as the retriever does by default (--no-hybrid: vectors)",
    )
    trc.add_argument(
        "--source", action="append", default=[], metavar="PATH",
        help="the ingested files or folders, to check the loaded source itself "
        "(default: the stored chunks stand in for it)",
    )
    trc.add_argument("--answer", metavar="TEXT", help="the generator's answer, to check it")
    trc.add_argument(
        "--max-context-tokens", type=int, default=None, metavar="N",
        help="the context budget, in the embedding model's tokens (default: none)",
    )
    trc.add_argument("--json", action="store_true", help="print JSON")
    add_principal_args(trc)


def run(args: argparse.Namespace) -> int:
    """Run ``ragingest trace`` (where expected texts are lost between the file and the answer);
    returns the exit status."""
    from ragingest.cli.arg_groups import principals_of
    from ragingest.evaluate.trace import trace

    report = trace(
        args.question,
        args.expect,
        persist_dir=args.persist_dir,
        collection=args.collection,
        k=args.k,
        hybrid=args.hybrid,
        sources=args.source,
        answer=args.answer,
        max_context_tokens=args.max_context_tokens,
        records_url=args.records_url,
        principals=principals_of(args),
    )
    if args.json:
        print(json.dumps(report.to_json(), ensure_ascii=False, indent=2))
    else:
        print(report.render())
    return EXIT_OK if report.ok else EXIT_FILES_FAILED
