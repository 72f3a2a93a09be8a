"""A real Chroma server (``chroma run``) and a real Ray cluster (``ray start --head``),
both on 127.0.0.1, free ports, temp paths, stopped by pid. Ray into the server must equal the
local engine into an embedded store (ids, texts, metadata); a killed worker converges."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest

from ragingest.cli.main import main
from ragingest.pipeline.ray_env import LOOPBACK, ray_environment, ray_runtime
from ragingest.pipeline.runner import IngestOptions, ingest
from ragingest.vectorstore.chroma.server import ChromaServer, use_server
from ragingest.vectorstore.chroma.store import chroma_client
from tests.chroma import chroma_server as start_chroma_server
from tests.chroma import free_port, stop, wait_port

pytestmark = pytest.mark.slow

if importlib.util.find_spec("ray") is None:  # not imported here: ray_runtime sets its env first
    pytest.skip("ray is not installed", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory):
    with start_chroma_server(tmp_path_factory.mktemp("chroma_server")) as server:
        yield server


def ray_start_command(port: int, num_cpus: int | None = None) -> list[str]:
    """``ray start --head --block`` on 127.0.0.1 (run it with ``ray_environment()``)."""
    ray = shutil.which("ray", path=str(Path(sys.executable).parent)) or "ray"
    command = [
        ray,
        "start",
        "--head",
        "--block",
        f"--node-ip-address={LOOPBACK}",
        f"--port={port}",
        "--include-dashboard=false",
        "--disable-usage-stats",
    ]
    if num_cpus is not None:
        command.append(f"--num-cpus={num_cpus}")
    return command


HEAD_SESSIONS: set[int] = set()  # our `ray start` heads: their workers share the session


@pytest.fixture(scope="module")
def ray_cluster(tmp_path_factory):
    # one CPU: one embedding actor and one split task, the fewest processes (each loads a
    # model or a tokenizer) beside the other test worker
    port = free_port()
    folder = tmp_path_factory.mktemp("ray_head")
    log = (folder / "head.log").open("w")
    proc = subprocess.Popen(
        ray_start_command(port, num_cpus=1),
        env={**os.environ, **ray_environment()},
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    HEAD_SESSIONS.add(proc.pid)
    try:
        wait_port(port, proc)
        time.sleep(2)  # the raylet registers after the GCS port opens
        yield f"{LOOPBACK}:{port}"
    finally:
        # never `ray stop` (machine-wide); SIGKILL at once: the head sits on SIGTERM past 10 s
        # and a throwaway cluster has nothing to flush
        stop(proc, grace=0)
        log.close()


def _rows(client, collection: str) -> dict[str, tuple[str, dict]]:
    got = client.get_collection(collection).get(include=["documents", "metadatas"])
    return {
        i: (doc, meta)
        for i, doc, meta in zip(got["ids"], got["documents"], got["metadatas"], strict=True)
    }


@pytest.fixture(scope="module")
def local_rows(tmp_path_factory):
    persist = tmp_path_factory.mktemp("local")
    report = ingest([EXAMPLES], IngestOptions(persist_dir=persist, collection="examples"))
    assert report.failed == 0
    return _rows(chroma_client(persist), "examples")


def test_ray_node_is_loopback(ray_cluster):
    with ray_runtime(ray_cluster) as ray:
        nodes = [node for node in ray.nodes() if node["Alive"]]
        assert nodes
        assert {node["NodeManagerAddress"] for node in nodes} == {LOOPBACK}
        assert ray.get_runtime_context().gcs_address.startswith(LOOPBACK + ":")


def test_ray_into_server_equals_local(
    ray_cluster, chroma_server, local_rows, tmp_path, capsys, count_parses
):
    persist = tmp_path / "state"
    args = ["--persist-dir", str(persist), "--collection", "examples"]
    server = ["--chroma-host", LOOPBACK, "--chroma-port", str(chroma_server.port)]
    ray = ["--engine", "ray", "--ray-address", ray_cluster, "--no-progress"]
    assert main(["ingest", str(EXAMPLES), *args, *server, *ray]) == 0
    assert sorted(count_parses) == sorted(p.name for p in EXAMPLES.rglob("*") if p.is_file())
    count_parses.clear()
    assert not (persist / "chroma.sqlite3").exists()  # Chroma is the server's
    assert _rows(chroma_server.client(), "examples") == local_rows

    # re-run over unchanged input: nothing parsed, nothing embedded, Ray not even started
    with use_server(chroma_server):
        again = ingest(
            [EXAMPLES],
            IngestOptions(
                persist_dir=persist, collection="examples", engine="ray", ray_address="127.0.0.1:1"
            ),
        )
    assert again.changed == 0 and again.added == 0 and again.embeddings_computed == 0
    assert count_parses == []
    assert _rows(chroma_server.client(), "examples") == local_rows

    capsys.readouterr()
    assert main(["status", *args, *server, "--json"]) == 0
    assert '"examples"' in capsys.readouterr().out
    assert main(["query", "срок выдачи альбома", *args, *server, "--json", "-k", "2"]) == 0
    assert "score" in capsys.readouterr().out


def _embed_workers() -> list[int]:
    """Embedding actors of our own cluster (never another run's on the same machine)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
            if "EmbedActor" in cmdline and os.getsid(int(entry.name)) in HEAD_SESSIONS:
                found.append(int(entry.name))
    return found


def test_worker_killed_converges(ray_cluster, chroma_server, local_rows, tmp_path):
    persist = tmp_path / "state"  # a fresh embedding cache: the actors must embed
    options = IngestOptions(
        persist_dir=persist, collection="killed", engine="ray", ray_address=ray_cluster
    )
    killed: list[int] = []

    def killer() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not killed:
            pids = _embed_workers()
            if pids:
                time.sleep(1.0)  # let it start loading the model
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pids[0], signal.SIGKILL)
                    killed.append(pids[0])
            time.sleep(0.2)

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    error = None
    with use_server(chroma_server):
        try:
            ingest([EXAMPLES], options)
        except Exception as exc:  # a clear message is the other allowed outcome
            error = exc
            assert "Ray engine failed" in str(exc) and "run again" in str(exc)
        thread.join(timeout=5)
        assert killed, "no embedding actor was seen to kill"
        if error is not None:
            ingest([EXAMPLES], options)
        rerun = ingest([EXAMPLES], options)
    assert rerun.changed == 0 and rerun.added == 0
    assert _rows(chroma_server.client(), "killed") == local_rows


def _small_corpus(folder: Path, good: int) -> None:
    """``good`` small Markdown files (two sections each, distinct text) and one broken .docx."""
    folder.mkdir()
    (folder / "broken.docx").write_bytes(b"not a zip archive")
    for i in range(good):
        sections = [
            f"## Section {j} of file {i}\n\nFile {i}, section {j}: the reading room opens at "
            f"{8 + i}:{10 * j:02d} and closes {j + 1} hours after the last lecture of the day."
            for j in range(2)
        ]
        text = f"# Handbook {i}\n\n" + "\n\n".join(sections) + "\n"
        (folder / f"doc_{i}.md").write_text(text, encoding="utf-8")


def test_ray_streams_groups_and_names_a_failed_file(ray_cluster, tmp_path, capfd):
    """The driver writes while the pipeline runs: one group per file at ``write_batch_size``
    1, never more than a file or two of rows held; a file that fails on Ray fails with the
    local engine's error; no deprecation warning from Ray calls."""
    from ragingest.pipeline import engine_ray as ray_engine

    good = 4
    corpus = tmp_path / "corpus"
    _small_corpus(corpus, good)
    common = {"collection": "small", "write_batch_size": 1, "embed_batch_size": 2}
    local = ingest([corpus], IngestOptions(persist_dir=tmp_path / "local", **common))
    capfd.readouterr()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ray = ingest(
            [corpus],
            IngestOptions(
                persist_dir=tmp_path / "ray", engine="ray", ray_address=ray_cluster, **common
            ),
        )
    out, err = capfd.readouterr()

    def failed(report):
        return [(f.path, f.status, f.kind, f.error) for f in report.files if f.error]

    assert failed(local) and failed(ray) == failed(local)
    assert "broken.docx" in failed(ray)[0][0]
    stats = ray_engine.LAST_STATS
    assert stats.files == good + 1 and stats.chunks == ray.added == local.added
    assert stats.groups == good  # one write per good file, while the pipeline ran
    assert stats.seconds["first_write"] < stats.seconds["pipeline"]
    assert stats.max_buffered_files <= 2  # rows in walk order: one file at a time
    assert _rows(chroma_client(tmp_path / "ray"), "small") == _rows(
        chroma_client(tmp_path / "local"), "small"
    )
    # Ray's own DataContext warns about its defaults when first created: not ours
    ours = [
        w
        for w in caught
        if issubclass(w.category, DeprecationWarning) and "/ragingest/" in w.filename
    ]
    assert not ours, [str(w.message) for w in ours]
    assert "deprecated" not in (out + err).lower()


def test_token_header_reaches_the_server():
    """The token goes out as ``Authorization: Bearer`` (what an auth proxy in front checks)."""
    import http.server

    seen: list[str | None] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.headers.get("Authorization"))
            self.send_response(401)
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    httpd = http.server.HTTPServer((LOOPBACK, 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        server = ChromaServer(LOOPBACK, httpd.server_address[1], token="s3cret")
        with contextlib.suppress(Exception):
            server.client().heartbeat()
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert seen and set(seen) == {"Bearer s3cret"}
