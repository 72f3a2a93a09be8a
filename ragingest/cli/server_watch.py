"""A Chroma server that stops answering (frozen, SIGSTOP, a hung proxy) ends a command in one
line (exit 8) instead of hanging it: chromadb's HTTP client waits without a time limit and
has no setting for one (a read through ``ChromaServer.client()`` ends by itself,
``vectorstore.chroma.answering``; this watch ends writes and anything else the command does).

Contract of ``watched(server)``: around a command that talks to ``server`` (None: nothing is
watched), a thread sends the server's heartbeat every ``CHECK_EVERY`` seconds with a
``timeout`` (default ``SERVER_TIMEOUT``, ``$RAGINGEST_CHROMA_TIMEOUT`` seconds). When one gets
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

from ragingest.errors import ServerUnreachableError
from ragingest.vectorstore.chroma.server import ChromaServer, server_timeout

CHECK_EVERY = 2.0  # seconds between heartbeats
_SIGNAL = signal.SIGUSR1


@contextlib.contextmanager
def watched(server: ChromaServer | None, timeout: float | None = None) -> Iterator[None]:
    """Watch ``server`` while the block runs (module docstring)."""
    if server is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    seconds = server_timeout() if timeout is None else timeout
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
