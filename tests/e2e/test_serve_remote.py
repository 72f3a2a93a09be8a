"""Serving from anywhere: with a Chroma server (``chroma run``) and a PostgreSQL records
database, a process with another HOME and an empty folder, none of the ingest machine's files,
returns the same passages (ids, spans, order, lexical ranks, expanded parents) as the process
that ingested, through ``ragingest.retriever`` and through the CLI ``query``; ``status`` reads
there too. A server that can't be reached is one line and exit 8, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from ragingest.cli.main import main
from tests.chroma import LOOPBACK, chroma_server, free_port
from tests.conftest import EXAMPLES, ROOT
from tests.postgres import postgres_server, server_bin

pytestmark = pytest.mark.slow

CLI = [sys.executable, "-m", "ragingest.cli.main"]
QUESTIONS = [
    "На сколько дней выдают альбом с красной наклейкой?",
    "ошибка E-07",
    "как вернуть товар надлежащего качества",
    "delivery time for orders",
]
RETRIEVE = """
import json, sys, ragingest
options = json.loads(sys.argv[1])
retriever = ragingest.retriever(**options)
out = []
for question in json.loads(sys.argv[2]):
    docs = retriever.invoke(question)
    out.append([
        [d.id, d.metadata["source"], d.metadata["start_index"], d.metadata["end_index"],
         d.metadata.get("dense_rank"), d.metadata.get("lexical_rank"), d.metadata["expanded"],
         d.metadata["chunk_ids"], d.page_content]
        for d in docs
    ])
print(json.dumps(out, ensure_ascii=False))
"""


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    if server_bin() is None:
        pytest.skip("PostgreSQL server binaries not installed (scripts/setup.sh installs them)")
    with postgres_server() as pg, chroma_server(tmp_path_factory.mktemp("chroma")) as chroma:
        yield chroma, pg.create_database(f"t_{uuid.uuid4().hex[:12]}")


def machine(tmp_path: Path, name: str) -> tuple[Path, dict[str, str]]:
    """A folder and an environment of their own: another HOME; the model stays where this
    machine installed it (it is not a file of the ingest run)."""
    from ragingest.models.locate import cache_dir

    folder = tmp_path / name
    (folder / "home").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGINGEST_")}
    env |= {
        "HOME": str(folder / "home"),
        "RAGINGEST_CACHE_DIR": str(cache_dir()),
        "HF_HUB_OFFLINE": "1",
        "PYTHONPATH": str(ROOT),
    }
    return folder, env


def run(argv: list[str], folder: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        argv, cwd=folder, env=env, capture_output=True, text=True, encoding="utf-8", timeout=900
    )


def test_a_reader_elsewhere_returns_the_ingest_machines_passages(servers, tmp_path):
    chroma, url = servers
    server = ["--chroma-host", LOOPBACK, "--chroma-port", str(chroma.port)]
    ingest_dir, ingest_env = machine(tmp_path, "ingest")
    persist = ingest_dir / "state"
    # the ingest in this process (what it stores is the point); the readers are processes
    ingest_argv = ["ingest", str(EXAMPLES), "--persist-dir", str(persist), "--collection", "kb"]
    assert main([*ingest_argv, *server, "--records-url", url, "--no-progress"]) == 0
    assert not (persist / "chroma.sqlite3").exists()  # Chroma is the server's
    assert not list(persist.glob("ragingest_*.sqlite"))  # parents, lexical, cache: PostgreSQL

    reader_dir, reader_env = machine(tmp_path, "reader")
    empty = reader_dir / "empty"
    empty.mkdir()
    reader_env["RAGINGEST_RECORDS_URL"] = url  # the environment variable ingest reads too
    common = {"collection": "kb", "chroma_host": LOOPBACK, "chroma_port": chroma.port}
    questions = json.dumps(QUESTIONS, ensure_ascii=False)
    here = run(
        [
            sys.executable,
            "-c",
            RETRIEVE,
            json.dumps(common | {"persist_dir": str(persist), "records_url": url}),
            questions,
        ],
        ingest_dir,
        ingest_env,
    )
    there = run([sys.executable, "-c", RETRIEVE, json.dumps(common), questions], empty, reader_env)
    assert here.returncode == 0, here.stderr
    assert there.returncode == 0, there.stderr
    passages, remote = json.loads(here.stdout), json.loads(there.stdout)
    assert remote == passages
    flat = [p for answer in passages for p in answer]
    assert all(len(answer) == 4 for answer in passages)
    assert any(p[5] is not None for p in flat)  # lexical ranks came from PostgreSQL
    assert any(p[6] for p in flat)  # parents expanded from PostgreSQL
    assert sorted(os.listdir(empty)) == []  # the reader wrote nothing beside it

    query = ["query", QUESTIONS[0], "--collection", "kb", "--json", "-k", "5"]
    cli_here = run(
        [*CLI, *query, "--persist-dir", str(persist), *server, "--records-url", url],
        ingest_dir,
        ingest_env,
    )
    cli_there = run([*CLI, *query, *server], empty, reader_env)
    assert cli_here.returncode == 0 and cli_there.returncode == 0, cli_there.stderr
    hits = json.loads(cli_there.stdout)
    assert hits == json.loads(cli_here.stdout) and len(hits) == 5
    assert any(hit["lexical_rank"] for hit in hits)

    expect = ["--expect", "срок выдачи составляет три дня", "--json"]
    trace = run([*CLI, "trace", QUESTIONS[0], *expect, "--collection", "kb", *server], empty,
                reader_env)  # fmt: skip
    assert trace.returncode in (0, 1), trace.stderr  # 1: a checkpoint failed, said as such
    checks = json.loads(trace.stdout)
    assert checks["question"] == QUESTIONS[0] and "Traceback" not in trace.stderr

    status = run([*CLI, "status", "--collection", "kb", *server, "--json"], empty, reader_env)
    assert status.returncode == 0, status.stderr
    report = json.loads(status.stdout)
    assert report["consistent"] and report["persist_dir"] is None
    assert report["chunks"] == report["records"] > 0 and report["files"] == report["files_tracked"]
    assert sorted(os.listdir(empty)) == []


def test_a_server_that_cannot_be_reached_is_one_line_and_exit_7(servers, tmp_path):
    chroma, url = servers
    folder, env = machine(tmp_path, "reader")
    dead = str(free_port())  # nothing listens there
    cases = {
        "Chroma server": ["--chroma-host", LOOPBACK, "--chroma-port", dead, "--records-url", url],
        "records database": [
            "--chroma-host", LOOPBACK, "--chroma-port", str(chroma.port),
            "--records-url", url.replace(url.split("@")[1].split("/")[0], f"{LOOPBACK}:{dead}"),
        ],
    }  # fmt: skip
    for what, servers_argv in cases.items():
        for command in (["query", "срок выдачи"], ["status"]):
            done = run([*CLI, *command, "--collection", "kb", *servers_argv], folder, env)
            assert done.returncode == 8, (command, done.stderr)
            lines = done.stderr.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith(f"ragingest: {what} "), done.stderr
            assert "can't be reached" in lines[0] and "Traceback" not in done.stderr
