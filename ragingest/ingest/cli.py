"""The ``ragingest`` command line. Exit codes: 0 ok, 1 some files failed, 2 usage error."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from ragingest.errors import RagIngestError

EPILOG = """examples:
  ragingest ingest docs/ --persist-dir ./chroma_db --collection kb
  ragingest query "На сколько дней выдают альбом?" --persist-dir ./chroma_db --collection kb
  ragingest inspect memo.md --strategy fixed --unit chars --chunk-size 120 --contains "три дня"
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
        help="largest chunk (default: 1000 tokens, capped at the model's limit)",
    )
    group.add_argument(
        "--chunk-overlap",
        type=_positive,
        default=None,
        help="overlap between pieces of one long section (default 15%% of size)",
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
        "skips unchanged chunks and removes stale ones.",
    )
    ing.add_argument("paths", nargs="+", metavar="PATH", help="files or folders")
    _store_args(ing)
    _split_args(ing)
    ing.add_argument(
        "--include",
        action="append",
        default=[],
        metavar="GLOB",
        help="only files matching (repeatable), e.g. '*.md'",
    )
    ing.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="skip files matching (repeatable)",
    )
    ing.add_argument("--max-file-mb", type=float, default=32, help="refuse larger files")
    ing.add_argument(
        "--no-context-prefix",
        action="store_true",
        help="embed the chunk text alone, without its heading breadcrumb",
    )
    ing.add_argument("--report", metavar="FILE", help="write the JSON run report here")
    ing.add_argument("--no-progress", action="store_true", help="no progress bar")

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
    ins.add_argument("--strategy", choices=("heading", "fixed", "recursive"), default="heading")
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
    return parser


def _store_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--persist-dir", required=True, type=Path, help="Chroma directory")
    parser.add_argument("--collection", required=True, help="collection name")


def _cmd_ingest(args: argparse.Namespace) -> int:
    from ragingest.ingest.pipeline import IngestOptions, SplitSettings, ingest

    split = SplitSettings(
        chunk_size=args.chunk_size,
        chunk_overlap=args.chunk_overlap,
        min_chunk_size=100 if args.min_chunk_size is None else args.min_chunk_size,
        context_prefix=not args.no_context_prefix,
    )
    missing = [p for p in args.paths if not Path(p).exists()]
    if missing:
        print(f"ragingest: no such file or folder: {', '.join(missing)}", file=sys.stderr)
        return 2
    options = IngestOptions(
        persist_dir=args.persist_dir,
        collection=args.collection,
        model=args.model,
        split=split,
        include=args.include,
        exclude=args.exclude,
        max_file_bytes=int(args.max_file_mb * 2**20),
        progress=not args.no_progress,
    )
    report = ingest(args.paths, options)
    if args.report:
        report.write(args.report)
    print(report.summary())
    return report.exit_code


def _cmd_query(args: argparse.Namespace) -> int:
    from ragingest.ingest.query import search

    hits = search(args.text, args.persist_dir, args.collection, args.k, args.where, args.model)
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
    from ragingest.ingest.inspect import inspect_file, make_splitter, render_text

    splitter = make_splitter(
        args.strategy,
        args.unit,
        args.chunk_size,
        args.chunk_overlap,
        args.min_chunk_size,
        args.model,
    )
    result = inspect_file(args.file, splitter, args.contains)
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=1))
    else:
        print(render_text(result))
    return 0


COMMANDS = {"ingest": _cmd_ingest, "query": _cmd_query, "inspect": _cmd_inspect}


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="ragingest: %(message)s"
    )
    try:
        return COMMANDS[args.command](args)
    except (RagIngestError, ValueError) as exc:
        print(f"ragingest: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
