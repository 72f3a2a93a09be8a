"""The ``ragingest`` command line. Exit codes: 0 ok, 1 some files failed, 2 usage error,
3 collection locked, 4 read-only store, 5 damaged store, 6 disk full, 7 refused (the run would
delete most of the collection), 8 a server (Chroma, the records database) can't be reached,
refuses the token or stops answering, 130 interrupted (Ctrl-C), 141 the output's reader went
away (``| head``), 143 terminated (SIGTERM) (``cli.faults``)."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
from typing import TYPE_CHECKING

from ragingest.cli import faults
from ragingest.cli.args import build_parser, command_of
from ragingest.cli.commands import COMMANDS
from ragingest.errors import (
    EXIT_UNREACHABLE,
    EXIT_USAGE,
    RagIngestError,
    ServerUnreachableError,
)

if TYPE_CHECKING:
    from ragingest.vectorstore.port import ServerOptions, StoreServer

__all__ = ["build_parser", "main"]

# SQLSTATE classes of a server that is gone or going: connection exception, insufficient
# resources, operator intervention (shutdown)
_CONNECTION_STATES = ("08", "53", "57")
EXIT_PIPE_CLOSED = 141  # 128 + SIGPIPE: what a shell shows for `cmd | head` cut short


def _terminate(signum: int, frame: object) -> None:
    raise faults.Terminated


class _StopNotLogged(logging.Filter):
    """Drops a log record that carries Ctrl-C or SIGTERM: the stop may land while a library
    cleans up (SQLAlchemy logs "Exception closing connection" with its traceback, then
    re-raises it), and the run says "interrupted"/"terminated" once, in one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], KeyboardInterrupt))


def configure_logging(verbose: bool) -> None:
    """``ragingest: message`` lines on stderr (INFO with ``-v``, else WARNING), none for a stop."""
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING, format="ragingest: %(message)s"
    )
    for handler in logging.getLogger().handlers:
        handler.addFilter(_StopNotLogged())


def main(argv: list[str] | None = None) -> int:
    """The ``ragingest`` command: parse ``argv`` (default: ``sys.argv``), run the subcommand;
    returns its exit status."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate)  # systemd's stop: handled like Ctrl-C
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(command_of(argv))
    args = parser.parse_args(argv)
    configure_logging(args.verbose)
    from ragingest.cli.server_watch import watched
    from ragingest.vectorstore.backends import use_backend

    try:
        with use_backend(getattr(args, "backend", None)):  # the store --backend names
            options, server = store_server(args)
            using = options.use(server) if options is not None else contextlib.nullcontext()
            timeout = options.timeout() if options is not None else None
            with using, watched(server, timeout):  # a frozen server: one line, exit 8
                return COMMANDS[args.command](args)
    except KeyboardInterrupt as exc:
        return faults.interrupted(exc)
    except BrokenPipeError:  # `| head` stopped reading: nothing more to say, and no traceback
        return _pipe_closed()
    except ServerUnreachableError as exc:
        print(f"ragingest: {exc}", file=sys.stderr)
        return EXIT_UNREACHABLE
    except (RagIngestError, ValueError) as exc:
        print(f"ragingest: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:
        where, report = getattr(args, "persist_dir", None), vars(args).get("report")
        code = faults.report_fault(exc, where, report, kind=getattr(args, "backend", None))
        if code is not None:
            return code
        message = unreachable(exc, args)
        if message is None:
            raise
        print(f"ragingest: {message}", file=sys.stderr)
        return EXIT_UNREACHABLE


def _pipe_closed() -> int:
    """Stdout's reader is gone: point stdout at /dev/null (so the interpreter's last flush
    says nothing either) and exit as a process killed by SIGPIPE would (141)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return EXIT_PIPE_CLOSED


def store_server(args: object) -> tuple[ServerOptions | None, StoreServer | None]:
    """The store's server options (``backends.server_options``: those of the kind
    ``--backend`` names) and the server ``args`` name with them (None: none). The options are
    parsed as the default kind's (``cli.arg_groups``): another kind refuses them."""
    from ragingest.vectorstore.backends import DEFAULT, active_kind, server_options

    kind = active_kind(getattr(args, "backend", None))
    options = server_options(kind)
    if options is None:
        given = server_options(DEFAULT)
        if given is not None and given.from_args(args) is not None:
            raise ValueError(f"the {kind} backend keeps no collections on a server")
        return None, None
    return options, options.from_args(args)


def unreachable(exc: BaseException, args: object) -> str | None:
    """One line for a server that went away or can't be reached, or None for other errors:
    the records database (a --records-url server down, a bad host) or the store's server
    (down after the command connected)."""
    from sqlalchemy.exc import OperationalError

    if isinstance(exc, OperationalError):
        from ragingest.vectorstore.records.database import display_url, records_url_for

        try:
            where = display_url(
                records_url_for(
                    getattr(args, "persist_dir", None), getattr(args, "records_url", None)
                )
            )
        except ValueError:
            where = "?"
        reason = str(exc.orig or exc).strip().splitlines()[0]
        state = str(getattr(exc.orig, "sqlstate", None) or "")
        if state and not state.startswith(_CONNECTION_STATES):  # it answered: no outage
            return f"records database {where} refused a statement ({state}): {reason}"
        return f"records database {where} can't be reached: {reason}"
    options, server = store_server(args)
    return options.unreachable(server, exc) if options is not None else None


if __name__ == "__main__":
    sys.exit(main())
