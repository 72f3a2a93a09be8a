"""The ``ragingest`` command line. Exit codes: 0 ok, 1 some files failed, 2 usage error."""

from __future__ import annotations

import logging
import sys

from ragingest.errors import RagIngestError
from ragingest.ingest.args import build_parser
from ragingest.ingest.commands import COMMANDS

__all__ = ["build_parser", "main"]


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
