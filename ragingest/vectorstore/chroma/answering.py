"""A Chroma server's reads that end when the server stops answering, in any thread.

chromadb's ``HttpClient`` waits for a reply without a time limit and has no setting for one
(its ``httpx`` session is built with ``timeout=None``), so a frozen server (SIGSTOP, a hung
proxy) would hang an app's ``retriever.invoke`` for good. ``AnsweringClient`` wraps the client:
each read (the client's collection lookups and heartbeat, its collections' ``query``, ``get``,
``count`` and ``peek``) runs in a helper thread while the caller waits; every ``timeout``
seconds without a result the caller asks the server's heartbeat (``silent``), and when that
goes unanswered for ``timeout`` seconds too, raises ``ServerUnreachableError`` ("stopped
answering"). A slow read of a server that still answers is waited for. Writes pass through
unchanged: a write given up here could still land later, behind the run's back (the CLI's
heartbeat watch ends the whole process instead: ``cli.server_watch``).
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from ragingest.errors import ServerUnreachableError

T = TypeVar("T")
Silent = Callable[[float], bool]  # whether the server's heartbeat goes unanswered that long


def answered(call: Callable[[], T], silent: Silent, timeout: float, message: str) -> T:
    """``call()``, or ``ServerUnreachableError(message)`` once the server stops answering (see
    the module docstring). The abandoned call's thread ends when its socket does."""
    done = threading.Event()
    box: dict[str, Any] = {}
    context = contextvars.copy_context()

    def run() -> None:
        try:
            box["value"] = context.run(call)
        except BaseException as exc:  # handed to the caller
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, name="ragingest-chroma-read", daemon=True).start()
    while not done.wait(timeout):
        if silent(timeout) and not done.is_set():
            raise ServerUnreachableError(message)
    if "error" in box:
        raise box["error"]
    return box["value"]


class _Reads:
    """Forwards every attribute; the reads named in ``READS`` wait through ``answered``."""

    READS: frozenset[str] = frozenset()

    def __init__(self, wrapped: Any, wait: Callable[[Callable[[], Any]], Any]) -> None:
        self._wrapped = wrapped
        self._wait = wait

    def __getattr__(self, name: str) -> Any:
        if name in ("_wrapped", "_wait"):  # not set yet (a copy being made)
            raise AttributeError(name)
        attribute = getattr(self._wrapped, name)
        if name not in self.READS:
            return attribute

        def read(*args: Any, **kwargs: Any) -> Any:
            return self._answer(name, self._wait(lambda: attribute(*args, **kwargs)))

        return read

    def _answer(self, name: str, value: Any) -> Any:
        return value


class AnsweringCollection(_Reads):
    """A chromadb collection of a server whose reads end when the server stops answering."""

    READS = frozenset({"query", "get", "count", "peek"})


class AnsweringClient(_Reads):
    """A chromadb ``HttpClient`` whose reads, and its collections', end when the server stops
    answering (module docstring)."""

    READS = frozenset(
        {"get_collection", "get_or_create_collection", "list_collections", "heartbeat"}
    )

    def __getattr__(self, name: str) -> Any:
        if name == "create_collection":  # a write, but its collection reads like the others
            create = getattr(self._wrapped, name)
            return lambda *a, **k: AnsweringCollection(create(*a, **k), self._wait)
        return super().__getattr__(name)

    def _answer(self, name: str, value: Any) -> Any:
        if name in ("get_collection", "get_or_create_collection"):
            return AnsweringCollection(value, self._wait)
        return value
