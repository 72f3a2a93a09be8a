"""A throwaway PostgreSQL server for tests: ``initdb`` into a temp folder, ``postgres`` on
127.0.0.1 at a free port (and a unix socket in the folder), stopped by pid.

PostgreSQL refuses to run as root: as root the server runs as the ``postgres`` user (created
when missing). Debian's server binaries live in ``/usr/lib/postgresql/N/bin`` (not on PATH);
``scripts/setup_test_system.sh`` installs the ``postgresql`` package when they are missing.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

LOOPBACK = "127.0.0.1"
USER = "postgres"
INITDB_FLAGS = ("-E", "UTF8", "--no-sync", "--no-instructions")


def server_bin() -> Path | None:
    """The folder holding ``initdb`` and ``postgres``, newest version first; None if absent."""
    candidates = sorted(
        Path("/usr/lib/postgresql").glob("*/bin"),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
        reverse=True,
    )
    found = shutil.which("initdb")
    if found:
        candidates.append(Path(found).resolve().parent)
    for folder in candidates:
        if (folder / "initdb").is_file() and (folder / "postgres").is_file():
            return folder
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


def _run_as() -> dict:
    """``subprocess`` arguments that run the server as ``postgres`` when we are root."""
    if os.geteuid() != 0:
        return {}
    try:
        pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER],
            check=True,
        )
    return {"user": USER, "group": pwd.getpwnam(USER).pw_gid, "extra_groups": []}


@dataclass
class PostgresServer:
    folder: Path
    port: int
    proc: subprocess.Popen

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://{USER}@{LOOPBACK}:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """A new empty database; returns its URL."""
        import psycopg

        with psycopg.connect(
            host=LOOPBACK, port=self.port, user=USER, dbname="postgres", autocommit=True
        ) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        """Fast shutdown (SIGINT) of our own postmaster by pid; SIGKILL if it hangs."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        shutil.rmtree(self.folder, ignore_errors=True)


@contextlib.contextmanager
def postgres_server() -> Iterator[PostgresServer]:
    """A running server (trust auth, fsync off: test data only); stopped and removed after."""
    binaries = server_bin()
    if binaries is None:
        raise FileNotFoundError("PostgreSQL server binaries (initdb, postgres) not found")
    run_as = _run_as()
    folder = Path(tempfile.mkdtemp(prefix="ragingest-pg-"))
    if run_as:
        os.chown(folder, pwd.getpwnam(USER).pw_uid, run_as["group"])
    data, log = folder / "data", folder / "server.log"
    env = {**os.environ, "LC_ALL": "C", "LANG": "C"}
    subprocess.run(
        [str(binaries / "initdb"), "-D", str(data), "-U", USER, "-A", "trust", *INITDB_FLAGS],
        check=True,
        capture_output=True,
        cwd=folder,
        env=env,
        **run_as,
    )
    port = _free_port()
    settings = {
        "listen_addresses": LOOPBACK,
        "port": str(port),
        "unix_socket_directories": str(folder),
        "fsync": "off",
        "synchronous_commit": "off",
        "full_page_writes": "off",
        "max_connections": "50",
        "shared_buffers": "32MB",
    }
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(binaries / "postgres"), "-D", str(data)]
            + [arg for key, value in settings.items() for arg in ("-c", f"{key}={value}")],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=folder,
            env=env,
            start_new_session=True,
            **run_as,
        )
    server = PostgresServer(folder, port, proc)
    try:
        _wait_ready(server, log)
        yield server
    finally:
        server.stop()


def _wait_ready(server: PostgresServer, log: Path, seconds: float = 60) -> None:
    import psycopg

    deadline = time.monotonic() + seconds
    while True:
        if server.proc.poll() is not None:
            raise RuntimeError(f"postgres exited with {server.proc.returncode}: {log.read_text()}")
        try:
            with psycopg.connect(
                host=LOOPBACK, port=server.port, user=USER, dbname="postgres", connect_timeout=2
            ):
                return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
