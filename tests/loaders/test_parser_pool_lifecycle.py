"""The parser pool's lifecycle: a file that ran past a bound fails again without a second
parse while it is unchanged, and a worker whose parent is killed mid-parse ends too."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from multiprocessing.connection import Connection
from pathlib import Path

import pytest

from ragingest.errors import FileTimeoutError
from ragingest.loaders.process.bounded import ParserPool
from ragingest.loaders.process.worker_process import WORKER_MODULE

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PARENT = """
import sys
from ragingest.loaders.process.bounded import ParserPool
from test_parser_pool_lifecycle import sleep_forever

if __name__ == "__main__":
    ParserPool(timeout=600).call("slow.html", sleep_forever, sys.argv[1])
"""


def sleep_forever(pid_file: str) -> None:
    Path(pid_file).write_text(str(os.getpid()))
    time.sleep(3600)


def gone(pid: int) -> bool:
    """No such process, or only its zombie (a container's init may not reap it)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"
    except OSError:
        return True


def test_a_file_past_the_time_bound_fails_again_without_a_second_parse(tmp_path):
    cells = "".join(f"<tr><td>Позиция {i}</td><td>Описание {i}</td></tr>" for i in range(40_000))
    page = tmp_path / "big.html"
    page.write_text(f"<html><body><table>{cells}</table></body></html>", "utf-8")
    reason = "parsing took longer than 1 s (--file-timeout): stopped"
    with ParserPool(timeout=1.0) as pool:
        for _ in range(2):
            with pytest.raises(FileTimeoutError) as caught:
                pool.load(page, tmp_path, 2**25)
            assert (caught.value.path, caught.value.reason) == (str(page), reason)
        assert pool.restarts == 1  # the second load did not parse
        os.utime(page, ns=(10**18, 10**18))  # changed: parsed again
        with pytest.raises(FileTimeoutError):
            pool.load(page, tmp_path, 2**25)
        assert pool.restarts == 2


def test_a_worker_ends_when_its_parent_is_killed_mid_parse(tmp_path):
    (tmp_path / "parent.py").write_text(PARENT, "utf-8")
    pid_file = tmp_path / "pid"
    path = os.pathsep.join([str(ROOT), str(Path(__file__).parent)])
    parent = subprocess.Popen(
        [sys.executable, str(tmp_path / "parent.py"), str(pid_file)],
        env={**os.environ, "PYTHONPATH": path},
    )
    try:
        deadline = time.monotonic() + 120
        started = lambda: pid_file.exists() and pid_file.read_text() != ""  # noqa: E731
        while not started() and time.monotonic() < deadline and parent.poll() is None:
            time.sleep(0.1)
        worker = int(pid_file.read_text())
        assert not gone(worker)
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
    deadline = time.monotonic() + 30
    while not gone(worker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert gone(worker)


def test_a_worker_the_pool_closed_before_it_was_ready_exits_quietly():
    """A run with nothing to parse closes the pool while the worker still imports: the worker
    then finds the connection closed when it says it is ready, and ends without a traceback."""
    ours, theirs = socket.socketpair()
    worker = subprocess.Popen(
        [sys.executable, "-m", WORKER_MODULE, str(theirs.fileno()), "0", str(os.getpid())],
        pass_fds=(theirs.fileno(),),
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stderr=subprocess.PIPE,
        text=True,
    )
    theirs.close()
    connection = Connection(ours.detach())
    connection.send(list(sys.path))
    connection.close()  # before the worker's imports are done
    _, stderr = worker.communicate(timeout=120)
    assert (worker.returncode, stderr) == (0, "")
