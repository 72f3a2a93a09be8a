"""A throwaway Chroma server for tests: ``chroma run`` on 127.0.0.1 at a free port, data in a
temp folder, stopped by pid (its own session)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from ragingest.vectorstore.chroma.server import ChromaServer

LOOPBACK = "127.0.0.1"
BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


def wait_port(port: int, proc: subprocess.Popen, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"process exited early with {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection((LOOPBACK, port), timeout=1):
            return
        time.sleep(0.3)
    raise TimeoutError(f"nothing listens on {LOOPBACK}:{port}")


def stop(proc: subprocess.Popen, grace: float = 10) -> None:
    """Stop our own process (started with start_new_session) and its session, by pid: SIGTERM,
    then SIGKILL after ``grace`` seconds (at once with 0)."""
    if grace and proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=grace)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)


@contextlib.contextmanager
def chroma_server(folder: Path) -> Iterator[ChromaServer]:
    """``chroma run`` with its data and log in ``folder``; stopped after."""
    port = free_port()
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False", "DO_NOT_TRACK": "1"}
    with (folder / "server.log").open("w") as log:
        command = [str(BIN / "chroma"), "run", "--host", LOOPBACK, "--port", str(port)]
        proc = subprocess.Popen(
            [*command, "--path", str(folder / "data")],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            wait_port(port, proc)
            yield ChromaServer(LOOPBACK, port)
        finally:
            stop(proc)
