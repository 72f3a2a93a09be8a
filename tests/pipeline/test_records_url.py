"""The records database behind a SQLAlchemy URL (``--records-url``).

The default is the SQLite file in the Chroma directory, as before. With a real PostgreSQL
server (``tests/postgres.py``: initdb in a temp folder, 127.0.0.1, a free port, stopped by pid)
re-indexing behaves exactly as with SQLite, the writer lock is an advisory lock in that
database (a second writer on another "machine" exits 3; ``--wait`` waits; a killed writer's
lock dies with its connection), and a ``--rebuild`` swaps the alias there.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from ragingest.cli.main import build_parser, main
from ragingest.errors import LockedError
from ragingest.pipeline.lock import CollectionLock
from ragingest.pipeline.state import FileStamp, FileState, FileStates
from ragingest.vectorstore.cache import NAMESPACE
from ragingest.vectorstore.chroma.store import chroma_client, open_store
from ragingest.vectorstore.records.aliases import Catalog, resolve_collection
from ragingest.vectorstore.records.database import (
    RECORDS_FILE,
    RECORDS_URL_ENV,
    RecordsURLError,
    records_engine,
    records_url_for,
)
from ragingest.vectorstore.records.kv import kv_store
from ragingest.vectorstore.records.record_manager import record_manager
from tests.conftest import EXAMPLES, ROOT
from tests.pipeline.test_reindex import ingest_args, make_corpus, run_ingest, snapshot
from tests.pipeline.test_reindex_processes import read_until, start

pytestmark = pytest.mark.slow

CLI = [sys.executable, "-m", "ragingest.cli.main"]
CACHE = "ragingest_embeddings.sqlite"


@pytest.fixture
def pg_url(pg) -> str:
    """A fresh database on the module's server."""
    return pg.create_database(f"t_{uuid.uuid4().hex[:12]}")


def share_cache(source: Path, target: Path, records_url: str | None = None) -> None:
    """Give ``target`` the embedding cache of ``source`` (with a PostgreSQL ``records_url``
    the cache is in that database): the same vectors without embedding them twice (the
    collections compared here are ids, texts and metadata)."""
    target.mkdir(parents=True, exist_ok=True)
    if records_url is None:
        for path in source.glob(CACHE + "*"):
            shutil.copy2(path, target / path.name)
        return
    shared = kv_store(source, records_url, CACHE, NAMESPACE)
    keys = list(shared.yield_keys())
    local = kv_store(target, None, CACHE, NAMESPACE)
    local.mset(list(zip(keys, shared.mget(keys), strict=True)))


def counts(report: dict) -> tuple[int, ...]:
    return (
        report["code"],
        report["changed"],
        report["unchanged"],
        report["added"],
        report["deleted"],
        report["embeddings_computed"],
    )


def test_default_records_url_is_the_sqlite_file_in_the_persist_dir(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(RECORDS_URL_ENV, raising=False)
    want = f"sqlite:///{tmp_path}/ragingest_records.sqlite"
    assert records_url_for(tmp_path) == want
    engine = records_engine(tmp_path)
    assert engine is records_engine(tmp_path)  # one engine per URL per process
    assert (engine.dialect.name, engine.url.database) == ("sqlite", str(tmp_path / RECORDS_FILE))
    assert resolve_collection(tmp_path, "kbx") == "kbx"
    assert not (tmp_path / RECORDS_FILE).exists()  # engine and read path create nothing
    Catalog(tmp_path).start_build("kbx")  # a write path creates the file, as before
    assert (tmp_path / RECORDS_FILE).is_file()
    for command in (["status"], ["query", "q"], ["ingest", "p"], ["watch", "p"]):
        args = build_parser().parse_args([*command, "--persist-dir", "d", "--collection", "c"])
        assert args.records_url is None  # → $RAGINGEST_RECORDS_URL, else the default above

    monkeypatch.setenv(RECORDS_URL_ENV, "postgresql://u@127.0.0.1:1/env")
    assert records_url_for(tmp_path) == "postgresql://u@127.0.0.1:1/env"
    assert records_url_for(tmp_path, "sqlite:////x.db") == "sqlite:////x.db"  # the option wins
    assert records_engine(tmp_path).dialect.driver == "psycopg"  # not SQLAlchemy's psycopg2
    with pytest.raises(RecordsURLError, match=r"'mysql' is not supported; use SQLite .*PostgreSQL"):
        records_engine(tmp_path, "mysql+pymysql://u:secret@127.0.0.1/db")

    code = main(
        ingest_args(tmp_path, tmp_path / "db", "--records-url", "mysql+pymysql://u:secret@h/db")
    )
    err = capsys.readouterr().err
    assert code == 2 and "'mysql' is not supported" in err and "secret" not in err


OLD_SCHEMA = """
CREATE TABLE ragingest_journal (namespace TEXT NOT NULL, key TEXT NOT NULL, op TEXT NOT NULL,
    PRIMARY KEY (namespace, key));
CREATE TABLE ragingest_alias (name TEXT PRIMARY KEY, live TEXT NOT NULL, building TEXT,
    generation INTEGER NOT NULL DEFAULT 0);
CREATE TABLE ragingest_file_state (namespace TEXT NOT NULL, source TEXT NOT NULL,
    size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, sha256 TEXT NOT NULL,
    chunks INTEGER NOT NULL, version TEXT NOT NULL, updated_at REAL NOT NULL,
    PRIMARY KEY (namespace, source));
INSERT INTO ragingest_alias VALUES ('kbx', 'kbx__2', NULL, 2);
INSERT INTO ragingest_journal VALUES ('chroma/kbx__2', 'id1', 'add');
INSERT INTO ragingest_file_state VALUES ('chroma/kbx__2', 'a.md', 10, 1700000000123456789, 'ab',
    3, 'v', 1.5);
"""


def test_a_records_file_written_by_raw_sqlite3_reads_and_writes_the_same(tmp_path, monkeypatch):
    """Directories ingested before the URL option: their tables (made with sqlite3) serve as
    they are."""
    monkeypatch.delenv(RECORDS_URL_ENV, raising=False)
    with contextlib.closing(sqlite3.connect(tmp_path / RECORDS_FILE)) as connection:
        connection.executescript(OLD_SCHEMA)
    assert resolve_collection(tmp_path, "kbx") == "kbx__2"
    assert record_manager(tmp_path, "kbx__2").journal_items() == [("id1", "add")]
    states = FileStates(tmp_path, "chroma/kbx__2")
    old = FileState(FileStamp(10, 1700000000123456789, "ab"), 3, "v")
    assert states.load() == {"a.md": old}
    new = FileState(FileStamp(11, 1700000000999999999, "cd"), 4, "v")
    states.put([("a.md", new), ("b.md", old)])
    assert states.load() == {"a.md": new, "b.md": old}
    catalog = Catalog(tmp_path)
    assert catalog.start_build("kbx") == "kbx__3" and catalog.swap("kbx") == "kbx__2"
    assert resolve_collection(tmp_path, "kbx") == "kbx__3"


def test_postgres_records_reindex_like_sqlite(tmp_path, pg_url, count_parses, capsys):
    corpus = tmp_path / "examples"
    shutil.copytree(EXAMPLES, corpus)
    files = sorted(p.name for p in corpus.rglob("*") if p.is_file())
    on_pg, on_lite = tmp_path / "pg", tmp_path / "lite"
    url = ["--records-url", pg_url]

    first = run_ingest(corpus, on_pg, *url, collection="examples")
    assert first["code"] == 0 and first["added"] == len(snapshot(on_pg, "examples")) > 0
    assert sorted(count_parses) == files
    assert not (on_pg / RECORDS_FILE).exists()  # the records are in PostgreSQL
    share_cache(on_pg, on_lite, pg_url)
    lite = run_ingest(corpus, on_lite, collection="examples")
    assert (lite["code"], lite["added"], lite["embeddings_computed"]) == (0, first["added"], 0)
    assert snapshot(on_pg, "examples") == snapshot(on_lite, "examples")

    count_parses.clear()
    again = run_ingest(corpus, on_pg, *url, collection="examples")
    assert count_parses == []
    assert counts(again) == (0, 0, len(files), 0, 0, 0)
    assert again["skipped"] == first["added"]

    target = corpus / "regulation_returns.md"
    text = target.read_text(encoding="utf-8")
    edited = text.replace("в течение десяти дней со дня предъявления", "в течение семи дней со дня")
    assert edited != text
    target.write_text(edited, encoding="utf-8")
    before = snapshot(on_pg, "examples")
    edit = run_ingest(corpus, on_pg, *url, collection="examples")
    assert count_parses == ["regulation_returns.md"]
    assert counts(edit) == (0, 1, len(files) - 1, 4, 4, 1)  # 1 new text; 3 share its parent
    after = snapshot(on_pg, "examples")
    assert (len(set(after) - set(before)), len(set(before) - set(after))) == (4, 4)
    share_cache(on_pg, on_lite, pg_url)
    lite_edit = run_ingest(corpus, on_lite, collection="examples")
    assert counts(lite_edit) == (0, 1, len(files) - 1, 4, 4, 0)
    assert after == snapshot(on_lite, "examples")

    capsys.readouterr()
    status = ["status", "--persist-dir", str(on_pg), "--collection", "examples", "--json", *url]
    assert main(status) == 0
    got = json.loads(capsys.readouterr().out)
    assert (got["chunks"], got["records"], got["files_tracked"]) == (
        len(after),
        len(after),
        len(files),
    )
    assert (got["consistent"], got["records_url"]) == (True, pg_url)


def test_postgres_rebuild_swaps_the_alias_in_the_records_database(
    tmp_path, pg_url, capsys, monkeypatch
):
    corpus = make_corpus(tmp_path / "corpus", 2, seed=5)
    persist = tmp_path / "db"
    url = ["--records-url", pg_url]
    assert run_ingest(corpus, persist, *url)["code"] == 0
    changed = ["--min-chunk-size", "60"]  # other splitter settings: refused without --rebuild
    assert main(ingest_args(corpus, persist, *url, *changed)) == 2
    rebuilt = run_ingest(corpus, persist, *url, *changed, "--rebuild")
    # built as kbase__1, then renamed to the typed name (``run.settle``)
    assert (rebuilt["code"], rebuilt["collection"], rebuilt["rebuilt"]) == (0, "kbase", True)
    assert resolve_collection(persist, "kbase", pg_url) == "kbase"
    assert resolve_collection(persist, "kbase") == "kbase"  # nothing in the default SQLite file
    assert [c.name for c in chroma_client(persist).list_collections()] == ["kbase"]
    assert open_store(persist, "kbase", create=False, records_url=pg_url).name == (
        "kbase"
    )

    capsys.readouterr()
    query = ["query", "Раздел 0.1", "--persist-dir", str(persist), "--collection", "kbase"]
    assert main([*query, "--json", *url]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert len(hits) == 4 and {h["metadata"]["source"] for h in hits} <= {"doc_00.md", "doc_01.md"}
    assert main([*query, "--json"]) == 0  # the Chroma collection carries the typed name
    capsys.readouterr()
    status = ["status", "--persist-dir", str(persist), "--collection", "kbase", "--json"]
    assert main([*status, *url]) == 0
    assert json.loads(capsys.readouterr().out)["physical"] == "kbase"

    clean = tmp_path / "clean"
    share_cache(persist, clean, pg_url)
    assert run_ingest(corpus, clean, *changed)["embeddings_computed"] == 0
    monkeypatch.setenv(RECORDS_URL_ENV, pg_url)  # the fallback of --records-url
    rebuilt_rows = snapshot(persist)
    monkeypatch.delenv(RECORDS_URL_ENV)
    assert rebuilt_rows == snapshot(clean) and len(rebuilt_rows) == rebuilt["added"]


HOLD = """
import sys
from ragingest.pipeline.lock import CollectionLock
from ragingest.pipeline.state import FileStamp, FileState, FileStates
with CollectionLock(sys.argv[1], "kbase", records_url=sys.argv[2]):
    print("locked", flush=True)
    sys.stdin.read()
"""


def test_postgres_lock_one_writer_across_machines(tmp_path, pg_url, capsys):
    corpus = make_corpus(tmp_path / "corpus", 1, seed=9)
    here, there = tmp_path / "here", tmp_path / "there"  # two machines' --persist-dir
    url = ["--records-url", pg_url]
    first = run_ingest(corpus, here, *url)
    assert first["code"] == 0 and first["added"] > 0
    me = os.getpid()
    with CollectionLock(here, "kbase", records_url=pg_url):
        assert not (here / "ragingest_kbase.lock").exists()  # not the flock
        second = subprocess.run(
            [*CLI, *ingest_args(corpus, there, *url)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert second.returncode == 3, second.stderr
        assert f"is being written by another ragingest run (pid {me}," in second.stderr
        assert pg_url in second.stderr and "Re-run with --wait" in second.stderr
        with pytest.raises(LockedError):
            CollectionLock(there, "kbase", records_url=pg_url).__enter__()
        with CollectionLock(there, "other", records_url=pg_url):  # another collection: free
            pass
        capsys.readouterr()
        assert (
            main(["status", "--persist-dir", str(here), "--collection", "kbase", "--json", *url])
            == 0
        )
        assert json.loads(capsys.readouterr().out)["writer"]["pid"] == me
        waiting = start(
            ingest_args(corpus, here, *url, "--wait", "--report", str(tmp_path / "w.json"))
        )
        read_until(waiting, f"waiting for another ragingest run (pid {me},")
    _, err = waiting.communicate(timeout=300)
    assert waiting.returncode == 0, err
    report = json.loads((tmp_path / "w.json").read_text(encoding="utf-8"))
    assert (report["added"], report["deleted"], report["embeddings_computed"]) == (0, 0, 0)
    assert (
        report["skipped"] == first["added"]
    )  # (count_parses again only if the code changed since)

    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(there), pg_url],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(LockedError, match=f"pid {holder.pid},"):
            CollectionLock(here, "kbase", records_url=pg_url).__enter__()
        os.kill(holder.pid, signal.SIGKILL)  # a crashed writer: its connection closes
        holder.wait(timeout=30)
        deadline = time.monotonic() + 30
        while True:
            try:
                with CollectionLock(here, "kbase", records_url=pg_url):
                    break
            except LockedError:
                assert time.monotonic() < deadline, "the dead writer's lock never went"
                time.sleep(0.1)
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait(timeout=30)
