"""Per-file time (and optional memory) bound for parsers: a long-lived worker process.

A parser that loops or chews on a pathological file can't be stopped from inside the
process that runs it (a thread can't be killed, and C code ignores signals), so files are
parsed in a worker process that is killed when a file runs past the limit and started again
for the next file. The worker is a fresh interpreter (``python -m
ragingest.loaders.process.parse_worker``), not a fork: the parent holds ONNX Runtime and tokenizer
threads, which a fork would copy in an undefined state; and not multiprocessing's spawn,
which re-runs the caller's ``__main__`` (a plain script calling ``ingest``). It is started once and
reused, so a file costs one round trip of its documents through a pipe; the start-up
(interpreter + loader imports) is waited for separately and never counts against a file.

The memory bound is on the resident memory (RSS, what ``top`` shows; the parser libraries
count: ~0.5 GB once the HTML parser is loaded) of the worker and every process it started
(pandoc, which unstructured runs for EPUB/ODT/RTF), watched by the caller while it waits
(``/proc``; elsewhere ``RLIMIT_AS`` in the worker, which counts address space). It has a
default (``DEFAULT_FILE_MEMORY_MB``: the smaller of 2 GB and half the machine's memory). The
worker leads a process group of its own, and the whole group is killed with it: a parser's
child never outlives a timeout. A
memory limit set in the worker instead would surface as whatever the parser makes of a
failed allocation (a ``MemoryError`` wrapped by the loader, a C library's own error);
watched from outside, the reason is always the same. A file past it in a worker that had
parsed others is tried once more in a fresh worker (what they left behind counted too). The
worker also exits when the process that started it is gone (a killed Ray worker leaves no
parser behind).

Contract: ``ParserPool.call(path, function, *args)`` returns ``function(*args)`` as run in
the worker, or raises a ``FileError`` naming ``path``: the function's own ``FileError``
as raised, ``FileTimeoutError`` past ``timeout`` seconds, ``FileMemoryError`` past
``memory_mb`` (the worker is killed either way), a ``ParseError`` when the worker dies (a
crash) or the function raises anything else. ``function`` and its arguments and result must
pickle. With neither bound (``timeout`` and ``memory_mb`` None) the function runs in this
process, unbounded. Besides files (``load``), a run's LangChain loaders go through ``call``
(``loaders.inputs.sources``); a helper that must run beside the parser (a subprocess it starts) runs
inside ``function`` and is killed with the worker's process group.
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from langchain_core.documents import Document

from ragingest.defaults import FILE_TIMEOUT
from ragingest.errors import FileError, FileMemoryError, FileTimeoutError, ParseError
from ragingest.loaders.process.process_tree import resident_bytes, tree_resident_bytes
from ragingest.loaders.process.progress import report, timeout_reason
from ragingest.loaders.process.worker_process import WorkerProcess

if TYPE_CHECKING:  # the type only: the worker imports the loaders when it parses
    from ragingest.loaders.cleaning.rules import CleaningRules
    from ragingest.loaders.inputs.identity import FileIdentity

log = logging.getLogger(__name__)


def default_memory_mb() -> int:
    """The smaller of 2 GB and half the machine's memory (MB)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 2048
    return max(256, min(2048, total // 2**21))


DEFAULT_FILE_MEMORY_MB = default_memory_mb()
_START_TIMEOUT = 300.0  # the worker's interpreter and imports, on a loaded machine
_MEMORY_POLL = 0.05  # seconds between looks at the worker's resident memory
T = TypeVar("T")


def load_documents(
    path: Path,
    root: Path | None,
    max_bytes: int,
    cleaning: CleaningRules | None = None,
    identity: FileIdentity | None = None,
) -> list[Document]:
    """Every document of one file (``loader_for(...).lazy_load()``), as a list; with the
    walk's ``identity``, only if the path is still the file the walk checked."""
    from ragingest.loaders import loader_for

    return list(loader_for(path, root, max_bytes, cleaning, identity).lazy_load())


def memory_reason(memory_mb: int) -> str:
    """The error reason for a parse stopped at the ``--file-memory-mb`` limit."""
    mb = memory_mb
    return f"parsing needs more than {mb} MB of memory (--file-memory-mb {mb}): stopped"


def _file_key(path: Path) -> tuple[str, int, int] | None:
    """A file as it is now: path, size and mtime; None when it can't be read."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (str(path), info.st_size, info.st_mtime_ns)


class ParserPool:
    """One worker process running parsers under a time bound (see the module docstring)."""

    def __init__(self, timeout: float | None = FILE_TIMEOUT, memory_mb: int | None = None):
        self.timeout = timeout if timeout and timeout > 0 else None
        self.memory_mb = memory_mb if memory_mb and memory_mb > 0 else None
        self.memory_bytes = self.memory_mb * 2**20 if self.memory_mb else None
        self.bounded = self.timeout is not None or self.memory_bytes is not None
        self._watch = self.memory_bytes is not None and resident_bytes(os.getpid()) is not None
        self.restarts = 0  # workers killed or lost and started again
        self._process: Any = None
        self._connection: Connection | None = None
        self._waiting = True  # the started worker has not said it is ready yet
        self._served = 0  # answers the current worker gave
        self._past_bound: dict[tuple[str, int, int], FileError] = {}  # by ``_file_key``

    def start(self) -> None:
        """Start the worker now (it imports while the caller does other work)."""
        if not self.bounded or self._process is not None:
            return
        self._process = WorkerProcess(None if self._watch else self.memory_bytes)
        self._connection = self._process.connection

    def _ready(self, path: object) -> Connection:
        self.start()
        connection = self._connection
        assert connection is not None
        if self._waiting:
            if not connection.poll(_START_TIMEOUT):
                self.stop()
                raise ParseError(path, "the parser process did not start")
            try:
                connection.recv()
            except EOFError:
                code = self._process.exitcode if self._process else None
                self.stop()
                reason = f"the parser process failed to start (exit {code})"
                raise ParseError(path, reason) from None
            self._waiting = False
        return connection

    def _wait(
        self, path: object, connection: Connection, deadline: float, progress: list[str]
    ) -> None:
        """Until a message is in; past a bound the worker is killed and the error raised."""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self._restart()
                raise FileTimeoutError(path, timeout_reason(self.timeout or 0, progress))
            if connection.poll(min(left, _MEMORY_POLL) if self._watch else left):
                return
            used = tree_resident_bytes(self._process.pid) if self._process is not None else None
            if self.memory_mb and used is not None and used > (self.memory_bytes or 0):
                self._restart()
                raise FileMemoryError(path, memory_reason(self.memory_mb))

    def call(self, path: object, function: Callable[..., T], *args: object) -> T:
        """``function(*args)`` for the file ``path``, in the worker process when bounded (time
        and memory limits), else here."""
        if not self.bounded:
            return function(*args)
        reused = self._served > 0
        try:
            return self._call(path, function, args)
        except FileMemoryError:
            if not reused:
                raise
            # what earlier files left in the worker counted too: only a fresh worker's verdict
            # is the file's own
            return self._call(path, function, args)

    def _call(self, path: object, function: Callable[..., T], args: tuple[object, ...]) -> T:
        connection = self._ready(path)
        connection.send((function, args))
        deadline = time.monotonic() + (self.timeout or math.inf)
        progress: list[str] = []  # the first and the latest of this file's reports
        try:
            while True:
                self._wait(path, connection, deadline, progress)
                answer = connection.recv()
                if answer[0] != "progress":
                    break
                report(answer[1])  # the worker's progress, shown here
                progress[min(len(progress), 1) :] = [answer[1]]  # the first stays
            self._served += 1
        except EOFError:
            if self._process is not None:
                self._process.join(5)
            code = self._process.exitcode if self._process else None
            self._restart()
            how = f"signal {-code}" if code and code < 0 else f"exit {code}"
            raise ParseError(path, f"the parser process died ({how}); out of memory?") from None
        if answer[0] == "ok":
            return answer[1]
        if answer[0] == "file_error":
            _tag, kind, error_path, reason = answer
            raise kind(error_path, reason)
        if answer[0] == "memory" and self.memory_mb:
            self._restart()  # what the worker holds after a failed allocation is unknown
            raise FileMemoryError(path, memory_reason(self.memory_mb))
        raise ParseError(path, "out of memory" if answer[0] == "memory" else answer[1])

    def load(
        self,
        path: Path,
        root: Path | None,
        max_bytes: int,
        cleaning: CleaningRules | None = None,
        identity: FileIdentity | None = None,
    ) -> list[Document]:
        """``load_documents`` under the bound. A file that ran past a bound fails again at
        once while it is unchanged (the boilerplate scan and the split both load each file:
        a hanging file costs one timeout, not two)."""
        key = _file_key(path)
        known = self._past_bound.get(key) if key is not None else None
        if known is not None:
            raise type(known)(known.path, known.reason)
        try:
            return self.call(path, load_documents, path, root, max_bytes, cleaning, identity)
        except (FileTimeoutError, FileMemoryError) as exc:
            if key is not None:
                self._past_bound[key] = exc
            raise

    def forget(self) -> None:
        """Forget the files that ran past a bound: a new run tries them again."""
        self._past_bound.clear()

    def _restart(self) -> None:
        self.restarts += 1
        self.stop()

    def stop(self) -> None:
        """Kill the worker (the next call starts a fresh one)."""
        process, self._process = self._process, None
        if self._connection is not None:
            self._connection.close()
            self._connection = None
        self._waiting = True
        self._served = 0
        if process is not None:
            process.kill()

    def close(self) -> None:
        """Let the worker end on its own (the pipe closes), killing it if it lingers."""
        process = self._process
        if self._connection is not None:
            self._connection.close()
            self._connection = None
        if process is not None:
            process.join(2)
        self.stop()

    def __enter__(self) -> ParserPool:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
