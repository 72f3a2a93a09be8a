"""Splitting is under ``--file-timeout`` too: a file of 100 000 headings (parsed in well under
the bound, split in far more) is stopped and reported ``timeout`` by name, the other file goes
in, the exit code is 1; ``inspect`` of it is one line naming it. (Before, splitting was outside
every bound: 40 000 headings under ``--file-timeout 10`` ran 122 s and were reported ok.)"""

from __future__ import annotations

import json
import time

from ragingest.cli.main import main
from ragingest.vectorstore.chroma.store import chroma_client
from tests.helpers import ingest_cli

HEADINGS = 100_000  # splitting them takes tens of seconds on this machine; the bound is 2 s


def many_headings(count: int) -> str:
    return "\n".join(f"{'#' * (1 + i % 3)} H{i}\n\nx{i}.\n" for i in range(count))


def test_a_split_past_the_file_timeout_is_stopped_and_the_run_goes_on(tmp_path, capsys):
    corpus = tmp_path / "docs"
    corpus.mkdir()
    (corpus / "headings.md").write_text(many_headings(HEADINGS), "utf-8")
    (corpus / "note.md").write_text("# Заметка\n\nКороткий файл рядом с большим.\n", "utf-8")
    persist, report = tmp_path / "db", tmp_path / "report.json"
    started = time.monotonic()
    code = ingest_cli(corpus, persist, "kbase", "--report", report, "--file-timeout", "2")
    assert code == 1
    files = {f["path"]: f for f in json.loads(report.read_text("utf-8"))["files"]}
    assert (files["headings.md"]["status"], files["headings.md"]["kind"]) == ("failed", "timeout")
    reason = "splitting took longer than 2 s (--file-timeout): stopped"
    assert files["headings.md"]["error"] == reason
    assert (files["note.md"]["status"], files["note.md"]["chunks"]) == ("ok", 1)
    stored = chroma_client(persist).get_collection("kbase").get(include=["metadatas"])
    assert [m["source"] for m in stored["metadatas"]] == ["note.md"]
    assert time.monotonic() - started < 120  # the whole split alone took minutes before
    capsys.readouterr()
    inspect = ["inspect", str(corpus / "headings.md"), "--file-timeout", "2"]
    assert main(inspect) == 2  # as any error of its file: one line
    assert f"headings.md: {reason}" in capsys.readouterr().err
