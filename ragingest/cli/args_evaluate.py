"""The ``evaluate`` subcommand's arguments (``args`` builds the other subcommands')."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragingest import defaults as d


def add_evaluate_parser(sub: Any, positive: Callable[[str], int]) -> None:
    """The ``evaluate`` subcommand's parser, on the subparsers ``sub``; ``positive`` is the
    command line's non-negative integer type."""
    ev = sub.add_parser(
        "evaluate",
        help="score chunking configurations on a question set (recall, precision, IoU, ...)",
        description="Cut every corpus file with each configuration, embed the chunks, retrieve the "
        "top k for every question (exact cosine, fused with BM25 under --search hybrid) and "
        "score the hits against "
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
    ev.add_argument(
        "-k", type=int, default=d.EVALUATE_K, help=f"hits per question (default {d.EVALUATE_K})"
    )
    ev.add_argument(
        "--search",
        choices=d.EVALUATE_SEARCHES,
        default=d.EVALUATE_SEARCHES[0],
        help="how every configuration's chunks are ranked: hybrid (default, as ragingest's "
        "retriever: BM25 fused with the vectors, by its default fusion) or dense (vectors "
        "only, as Chroma's chunking report)",
    )
    ev.add_argument(
        "--sweep",
        nargs="+",
        default=[],
        metavar="AXIS=V1,V2",
        help="grid of configurations: strategy=heading,semantic,recursive,fixed,semchunk,chonkie,"
        "llamaindex "
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
        type=positive,
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
