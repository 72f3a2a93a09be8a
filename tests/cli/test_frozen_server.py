"""A Chroma server that stops answering (SIGSTOP on a real ``chroma run``): ``query`` and
``ingest`` end in one line with exit 8 within the client's limit, and once the server runs
again the next ingest is not blocked by the stopped one's lock."""

from __future__ import annotations

import os
import signal
import time

import pytest

from ragingest.cli.main import main
from ragingest.vectorstore.chroma.server import TIMEOUT_ENV
from tests.chroma import chroma_server

pytestmark = pytest.mark.slow


def _server_pid(folder) -> int:
    import subprocess

    out = subprocess.run(["pgrep", "-f", str(folder / "data")], capture_output=True, text=True)
    return min(int(p) for p in out.stdout.split())  # the `chroma run` we started (our folder)


def test_a_frozen_server_ends_query_and_ingest_in_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(TIMEOUT_ENV, "2")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Отпуск\n\nОтпуск оформляют за две недели.\n", "utf-8")
    with chroma_server(tmp_path) as server:
        remote = ["--chroma-host", server.host, "--chroma-port", str(server.port)]
        store = ["--persist-dir", str(tmp_path / "db"), "--collection", "kb", *remote]
        assert main(["ingest", str(docs), *store, "--no-progress"]) == 0
        pid = _server_pid(tmp_path)
        os.kill(pid, signal.SIGSTOP)
        try:
            (docs / "b.md").write_text("# Больничный\n\nБольничный сдают в отдел.\n", "utf-8")
            for argv in (["query", "отпуск", *store], ["ingest", str(docs), *store]):
                capsys.readouterr()
                clock = time.monotonic()
                assert main(argv) == 8
                assert time.monotonic() - clock < 60
                err = capsys.readouterr().err
                assert "stopped answering" in err and err.count("\n") == 1, err
        finally:
            os.kill(pid, signal.SIGCONT)
        assert main(["ingest", str(docs), *store, "--no-progress"]) == 0  # no stale lock
        capsys.readouterr()
        assert main(["query", "больничный", *store, "-k", "1"]) == 0
        assert "Больничный" in capsys.readouterr().out


def test_a_frozen_server_ends_a_python_api_read_with_a_catchable_error(tmp_path, monkeypatch):
    """No CLI around it (an app's own thread): the retriever's read raises
    ``ServerUnreachableError`` once the server leaves its heartbeat unanswered too."""
    import threading

    import ragingest
    from ragingest.errors import ServerUnreachableError

    monkeypatch.setenv(TIMEOUT_ENV, "2")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Отпуск\n\nОтпуск оформляют за две недели.\n", "utf-8")
    with chroma_server(tmp_path) as server:
        argv = ["ingest", str(docs), "--persist-dir", str(tmp_path / "db"), "--collection", "kb"]
        argv += ["--chroma-host", server.host, "--chroma-port", str(server.port), "--no-progress"]
        assert main(argv) == 0
        remote = {"chroma_host": server.host, "chroma_port": server.port}
        found = ragingest.retriever(tmp_path / "db", "kb", k=1, **remote)
        assert "Отпуск" in found.invoke("отпуск")[0].page_content
        outcome: list[BaseException | str] = []

        def read() -> None:
            for call in (
                lambda: found.invoke("отпуск"),  # a retriever made before
                lambda: ragingest.retriever(tmp_path / "db", "kb", **remote),  # one made now
            ):
                try:
                    outcome.append(str(call()))
                except BaseException as exc:
                    outcome.append(exc)

        pid = _server_pid(tmp_path)
        os.kill(pid, signal.SIGSTOP)
        try:
            reader = threading.Thread(target=read, daemon=True)
            reader.start()
            reader.join(90)
        finally:
            os.kill(pid, signal.SIGCONT)
        assert len(outcome) == 2, outcome
        for error in outcome:
            assert isinstance(error, ServerUnreachableError), outcome
            assert "stopped answering (no reply in 2 s" in str(error)
        assert "Отпуск" in found.invoke("отпуск")[0].page_content  # and reads again after
