"""A store's server that stops answering (frozen, SIGSTOP, a hung proxy) ends a command in one
line (exit 8) instead of hanging it: a store's HTTP client may wait without a time limit (so
does chromadb's, with no setting for one; Chroma's backend ends a read by itself, this watch
ends writes and anything else the command does).

Contract of ``watched(server, timeout)``: around a command that talks to ``server`` (a
``port.StoreServer``; None: nothing is watched), a thread sends the server's heartbeat every
``CHECK_EVERY`` seconds with a ``timeout`` (the kind's ``ServerOptions.timeout()``: Chroma's
``$RAGINGEST_CHROMA_TIMEOUT`` seconds, default 20; None: nothing is watched). When one gets
no answer in time, the main thread gets ``ServerUnreachableError`` ("stopped answering"),
raised by a signal handler, so a call blocked on the socket is ended too, and again at each
check while the server stays silent (an ``except`` on the way can't swallow it for good). A
server that refuses connections is not this module's case: the command's own call says so.
Only the main thread of the process is watched (signals reach only it).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ragingest.errors import ServerUnreachableError

if TYPE_CHECKING:
    from ragingest.vectorstore.port import StoreServer

CHECK_EVERY = 2.0  # seconds between heartbeats
_SIGNAL = signal.SIGUSR1


@contextlib.contextmanager
def watched(server: StoreServer | None, timeout: float | None) -> Iterator[None]:
    """Watch ``server`` while the block runs (module docstring)."""
    main_thread = threading.current_thread() is threading.main_thread()
    if server is None or timeout is None or not main_thread:
        yield
        return
    seconds = timeout
    message = server.silence_message(seconds)
    done = threading.Event()
    silence = threading.Event()
    main = threading.main_thread().ident

    def interrupt(signum: int, frame: object) -> None:
        if silence.is_set() and not done.is_set():
            raise ServerUnreachableError(message)

    def watch() -> None:
        while not done.wait(CHECK_EVERY):
            if server.silent(seconds) and not done.is_set():
                silence.set()
                assert main is not None
                signal.pthread_kill(main, _SIGNAL)

    previous = signal.signal(_SIGNAL, interrupt)
    thread = threading.Thread(target=watch, name="ragingest-server-watch", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        signal.signal(_SIGNAL, previous)
