"""Option groups several ``ragingest`` subcommands share (``args`` assembles them): the value
types, the split options, the store options and how files are read."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from ragingest import defaults as d

if TYPE_CHECKING:
    from ragingest.vectorstore.access.principals import Access


def non_negative(text: str) -> int:
    """An integer option's value, refused below 0."""
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be >= 0")
    return value


def share(text: str) -> float:
    """A fraction option's value, refused outside 0…1."""
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError("must be between 0 and 1")
    return value


def add_split_args(parser: argparse.ArgumentParser) -> None:
    """How chunks are cut and embedded: ingest, watch and inspect (same cut)."""
    group = parser.add_argument_group("splitting (sizes in --unit, default model tokens)")
    group.add_argument(
        "--chunk-size",
        type=non_negative,
        default=None,
        help=f"largest chunk (default: {d.CHUNK_SIZE} tokens, capped at the model's limit)",
    )
    group.add_argument(
        "--chunk-overlap",
        type=non_negative,
        default=None,
        help="overlap between pieces of one long section "
        f"(default {d.default_overlap(d.CHUNK_SIZE)})",
    )
    group.add_argument(
        "--min-chunk-size",
        type=non_negative,
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


def backend_name(text: str) -> str:
    """A ``--backend`` value, refused unless a backend of that name is registered (checked
    when given: listing the installed ones costs ``--help`` its entry-point scan)."""
    from ragingest.vectorstore.backends import backend_names

    known = backend_names()
    if text not in known:
        raise argparse.ArgumentTypeError(f"must be one of {', '.join(known)}")
    return text


def add_store_args(
    parser: argparse.ArgumentParser, persist_required: bool = True, backend: bool = False
) -> None:
    """Where the collection lives: the persist dir, the name, the records database, the
    store's server (every command that opens a collection), with ``backend`` the store's
    kind."""
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
    from ragingest.vectorstore.backends import DEFAULT, server_options

    if backend:
        parser.add_argument(
            "--backend",
            type=backend_name,
            default=DEFAULT,
            metavar="NAME",
            help=f"the store that holds the collection: {DEFAULT} (default), memory (this "
            "process only: for tests), or one an installed package registers "
            "(the ragingest.backends entry points)",
        )
    # the default kind's server options: the others' would be imported by every --help
    options = server_options(DEFAULT)
    if options is not None:
        options.add_arguments(parser)


def add_file_args(parser: argparse.ArgumentParser) -> None:
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
        help="stop parsing a file (or running a --loader) after this long, and splitting it "
        f"after as long again, and report it failed (default {d.FILE_TIMEOUT:g}; 0: none)",
    )
    parser.add_argument(
        "--file-memory-mb",
        type=non_negative,
        default=None,
        metavar="MB",
        help="stop parsing a file (or running a --loader) whose parser process and the "
        "processes it starts (pandoc) "
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
        "--ocr",
        choices=d.OCR_MODES,
        default=d.OCR_MODE,
        help="read scans with Tesseract OCR: auto reads PDF pages without a text layer or "
        "with a garbage one, and images (.png .jpg .tif); always reads every PDF page; never "
        f"reads none (default {d.OCR_MODE})",
    )
    parser.add_argument(
        "--ocr-lang",
        default=d.OCR_LANG,
        metavar="LANGS",
        help=f"Tesseract's language models, '+'-joined (default {d.OCR_LANG})",
    )
    parser.add_argument(
        "--ocr-max-pages",
        type=int,
        default=d.OCR_MAX_PAGES,
        metavar="N",
        help="a file with more pages to OCR fails, named (default "
        f"{d.OCR_MAX_PAGES}; OCR counts against --file-timeout)",
    )
    parser.add_argument(
        "--content-type",
        action="append",
        default=[],
        metavar="GLOB=TYPE",
        help="force a content type for matching files (repeatable), e.g. 'faq/*.md=faq'; "
        "default: .ragingest.toml [content_types] in the root, else auto-detected",
    )


def add_principal_args(parser: argparse.ArgumentParser) -> None:
    """``--as USER``, ``--group G`` (repeatable) and ``--all-principals``: who is reading a
    collection with an access policy (``principals_of`` reads them)."""
    who = parser.add_argument_group(
        "who is reading (a collection with an access policy refuses a read naming nobody)"
    )
    who.add_argument(
        "--as", dest="as_user", metavar="USER", default=None,
        help="read as this user (principal user:USER): only what USER may read comes back",
    )  # fmt: skip
    who.add_argument(
        "--group", dest="groups", action="append", default=[], metavar="G",
        help="a group the reader is in (principal group:G), repeatable",
    )  # fmt: skip
    who.add_argument(
        "--principal", dest="principals", action="append", default=[], metavar="P",
        help="any other principal the reader holds, as stored: unix:user:NAME, unix:group:NAME",
    )  # fmt: skip
    who.add_argument(
        "--all-principals", action="store_true",
        help="read every chunk whatever its readers (an operator's check; no --as/--group)",
    )  # fmt: skip


def principals_of(args: argparse.Namespace) -> Access:
    """The ``vectorstore.access`` value the principal options name: ``ALL``, a ``Principals``,
    or None (nobody named). ``ValueError`` when ``--all-principals`` comes with names."""
    from ragingest.vectorstore.access.principals import ALL, Principals

    named = [f"user:{args.as_user}"] if args.as_user else []
    named += [f"group:{g}" for g in args.groups] + list(args.principals)
    if args.all_principals:
        if named:
            raise ValueError("--all-principals reads everything: give it without --as/--group")
        return ALL
    return Principals(tuple(named)) if named else None
