"""The command line with hostile data and a hostile environment: escape sequences stored in a
document are printed escaped by ``query`` (the stored text is unchanged); SIGTERM ends a run
like Ctrl-C (one line, exit 143, the embeddings computed so far kept); a ``--persist-dir`` that
is a file is one line and exit 2."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from ragingest.cli.main import main
from ragingest.cli.terminal import terminal_safe
from ragingest.vectorstore.chroma.store import chroma_client
from ragingest.vectorstore.records.kv import KV_TABLE

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = "Выдача альбомов \x1b[2Jидёт\x1b]0;pwned\x07 по записи \u202eтекст."


def test_terminal_safe_escapes_controls_but_line_ends():
    assert terminal_safe("a\x1b[2Jb\x07\r\u202ec\n\td") == "a\\x1b[2Jb\\x07\\r\\u202ec\n\td"


def test_query_prints_escape_sequences_escaped(tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "evil.md").write_text(f"# Выдача\n\n{HOSTILE}\n", "utf-8")
    store = ["--persist-dir", str(tmp_path / "db"), "--collection", "esc"]
    assert main(["ingest", str(docs), *store, "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["query", "выдача альбомов", *store, "-k", "1"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "\\x1b[2Jидёт\\x1b]0;pwned\\x07 по записи \\u202eтекст." in out
    stored = chroma_client(tmp_path / "db").get_collection("esc").get(include=["documents"])
    assert any(HOSTILE in text for text in stored["documents"])  # stored as it was


def test_a_persist_dir_that_is_a_file_is_one_line_and_exit_2(tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nТекст.\n", "utf-8")
    file = tmp_path / "not-a-dir"
    file.write_text("x", "utf-8")
    capsys.readouterr()
    assert main(["ingest", str(docs), "--persist-dir", str(file), "--collection", "c"]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"ragingest: --persist-dir {file} is a file, not a folder: give a folder (it is "
        "created when missing)\n"
    )
    assert file.read_text("utf-8") == "x"


def cached_rows(db: Path) -> int:
    path = db / "ragingest_embeddings.sqlite"
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(path, timeout=1) as connection:
            query = f"SELECT COUNT(*) FROM {KV_TABLE.name}"  # the embedding cache's SQLStore table
            return connection.execute(query).fetchone()[0]
    except sqlite3.Error:
        return 0


def test_sigterm_ends_a_run_like_ctrl_c_and_keeps_the_cache(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(12):
        sections = "\n\n".join(
            f"## Правило {i}.{j}\n\nЗаявку номер {j} подают за {i + j} дней до срока."
            for j in range(40)
        )
        (docs / f"doc{i}.md").write_text(f"# Документ {i}\n\n{sections}\n", "utf-8")
    db = tmp_path / "db"
    command = [sys.executable, "-m", "ragingest.cli.main", "ingest", str(docs)]
    command += ["--persist-dir", str(db), "--collection", "term", "--no-progress"]
    command += ["--write-batch", "8", "--chunk-size", "40"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 240
    while cached_rows(db) == 0 and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert run.poll() is None, "the run ended before it could be stopped"
    run.send_signal(signal.SIGTERM)
    _out, err = run.communicate(timeout=120)
    assert run.returncode == 143
    assert err.decode() == "ragingest: terminated; the next run finishes the work\n"
    kept = cached_rows(db)
    assert kept > 0
    again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    # what the stopped run embedded is not embedded again: each kept vector is either already
    # in the index (its file written before the signal) or taken from the cache now
    counts = re.search(
        r"(\d+) added, (\d+) unchanged, \d+ deleted; (\d+) embeddings computed \((\d+) cached\)",
        again.stdout,
    )
    assert counts, again.stdout
    added, unchanged, computed, cached = map(int, counts.groups())
    total = int(re.search(r"chunks: (\d+)", again.stdout).group(1))  # type: ignore[union-attr]
    assert added == computed + cached and unchanged + added == total
    assert unchanged + cached > 0 and cached >= kept - unchanged, again.stdout


STOP_LOGGED = """
import logging, sys
from ragingest.cli.main import configure_logging
configure_logging(True)
pool = logging.getLogger("sqlalchemy.pool")
for stop in (KeyboardInterrupt, ValueError):
    try:
        raise stop("during close")
    except BaseException:
        pool.error("Exception closing connection %s", stop.__name__, exc_info=True)
"""


def test_a_stop_inside_a_librarys_cleanup_logs_no_traceback():
    """Ctrl-C landing while SQLAlchemy closes a pooled connection: SQLAlchemy logs it with a
    traceback before re-raising; the CLI's one "interrupted" line is all a user sees. Any
    other error still logs whole."""
    run = subprocess.run(
        [sys.executable, "-c", STOP_LOGGED], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    assert "KeyboardInterrupt" not in run.stderr
    assert run.stderr.startswith("ragingest: Exception closing connection ValueError\n")
    assert "ValueError: during close" in run.stderr
