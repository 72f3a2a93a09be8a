"""The parser worker as a process (``bounded.ParserPool`` runs files in it): a fresh
interpreter running ``loaders.process.parse_worker`` (``python -m``), started by ``subprocess`` with
one end of a socket pair, leading a process group of its own so that it is killed whole."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
from multiprocessing.connection import Connection
from pathlib import Path

from ragingest.loaders.process.process_tree import kill_group

WORKER_MODULE = "ragingest.loaders.process.parse_worker"


class WorkerProcess:
    """The worker process (``loaders.process.parse_worker``, run as ``python -m``) and its end of
    the connection: started by ``subprocess`` so that it never imports the caller's ``__main__``."""

    def __init__(self, memory_bytes: int | None) -> None:
        ours, theirs = socket.socketpair()
        descriptor = theirs.fileno()
        package_root = str(Path(__file__).resolve().parents[3])
        python_path = [package_root, *filter(None, [os.environ.get("PYTHONPATH")])]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(python_path)}
        command = [sys.executable, "-m", WORKER_MODULE, str(descriptor)]
        command += [str(memory_bytes or 0), str(os.getpid())]
        try:
            self.process = subprocess.Popen(
                command,
                pass_fds=(descriptor,),
                env=env,
                stdin=subprocess.DEVNULL,
                process_group=0,  # a group of its own: killed whole, what it started included
            )
        finally:
            theirs.close()
        self.connection = Connection(ours.detach())
        self.connection.send(list(sys.path))
        self.pid = self.process.pid

    @property
    def exitcode(self) -> int | None:
        """The exit status (negative: the signal), None while it runs."""
        return self.process.poll()

    def join(self, timeout: float) -> None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout)

    def kill(self) -> None:
        kill_group(self.pid)  # the worker and what it started (pandoc)
        if self.process.poll() is None:
            self.process.kill()
        self.join(5)
