"""The parser worker process: ``python -m ragingest.loaders.process.parse_worker FD MEMORY PARENT``.

``ParserPool`` (``loaders.process.bounded``) starts it with ``subprocess``, not with
multiprocessing: multiprocessing's spawn re-imports the caller's ``__main__`` in the child, so a
script that calls ``ragingest.ingest`` at its top level (no ``if __name__ == "__main__":``) would
run again in every worker. This entry point imports only ragingest.

Protocol over the connection on file descriptor ``FD`` (``multiprocessing.connection``
framing, pickled messages): the parent sends its ``sys.path`` (so the functions it names
import here as there); the worker answers ``("ready", None)`` once its imports are done, then
each ``(function, args)`` request with any number of ``("progress", text)`` (a long parse
saying how far it is: ``loaders.process.progress``) then ``("ok", result)``, ``("file_error", type,
path, reason)``, ``("memory", None)`` or ``("error", text)``, until the connection closes.
``MEMORY`` > 0 sets ``RLIMIT_AS`` here (where the parent can't watch ``/proc``); the worker
exits once process ``PARENT`` is gone.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from multiprocessing.connection import Connection
from typing import Any

from ragingest.errors import FileError
from ragingest.loaders.process.progress import reporting


def exit_when_orphaned(parent: int) -> None:
    """End this worker once ``parent`` is gone (then nobody reads its answers)."""
    while os.getppid() == parent:
        time.sleep(1.0)
    with contextlib.suppress(OSError):  # what this worker started (pandoc) goes with it
        os.killpg(os.getpgid(0), signal.SIGKILL)
    os._exit(0)


def serve(connection: Connection, memory_bytes: int | None, parent: int) -> None:
    """Answer ``(function, args)`` requests until the connection closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    threading.Thread(target=exit_when_orphaned, args=(parent,), daemon=True).start()
    if memory_bytes:  # only where the parent can't watch /proc
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    try:
        path = connection.recv()
        sys.path[:] = [*path, *(p for p in sys.path if p not in path)]
        import ragingest.loaders  # noqa: F401  (the imports happen before the first file's clock)

        connection.send(("ready", None))
    except (EOFError, OSError):  # the pool closed before asking for anything: nothing to do
        return
    while True:
        try:
            function, args = connection.recv()
        except (EOFError, OSError):
            return
        except Exception as exc:  # a function this process can't import (the caller's __main__)
            connection.send(("error", f"the parser process can't read the request: {exc}"))
            continue
        try:
            with reporting(lambda text: connection.send(("progress", text))):
                answer: tuple[Any, ...] = ("ok", function(*args))
        except FileError as exc:
            answer = ("file_error", type(exc), exc.path, exc.reason)
        except MemoryError:
            answer = ("memory", None)
        except Exception as exc:
            answer = ("error", f"{type(exc).__name__}: {exc}")
        try:
            connection.send(answer)
        except OSError:  # the pool is gone (closed or stopped): nobody reads the answer
            return
        except Exception as exc:  # an unpicklable result
            connection.send(("error", f"the result could not be sent back: {exc}"))


def main(argv: list[str]) -> None:
    descriptor, memory, parent = (int(a) for a in argv)
    serve(Connection(descriptor), memory or None, parent)


if __name__ == "__main__":
    main(sys.argv[1:])
