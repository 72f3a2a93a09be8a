"""The per-file time bound through a real run: a file whose parse runs past --file-timeout is
stopped and reported failed (kind ``timeout``), the other files go in, the exit code is 1,
and the lock is released (the next run starts at once). The 30 MB page of the default
bound is in ``bench/hostile.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragingest.vectorstore.chroma.store import chroma_client
from tests.helpers import ingest_cli

pytestmark = pytest.mark.slow

MODEL = "sentence-transformers/all-MiniLM-L6-v2"


def big_page(path: Path, rows: int = 40_000) -> None:
    cells = "".join(f"<tr><td>Позиция {i}</td><td>Описание {i}</td></tr>" for i in range(rows))
    path.write_text(f"<html><body><table>{cells}</table></body></html>", "utf-8")


def test_a_parse_past_the_file_timeout_is_stopped_and_the_run_goes_on(tmp_path):
    corpus = tmp_path / "docs"
    corpus.mkdir()
    big_page(corpus / "big.html")  # ~2.5 MB: parses for many seconds
    (corpus / "note.md").write_text("# Заметка\n\nКороткий файл после большого.\n", "utf-8")
    persist, report = tmp_path / "db", tmp_path / "report.json"
    args = ["--model", MODEL, "--report", str(report)]
    assert ingest_cli(corpus, persist, "kbase", *args, "--file-timeout", "1") == 1
    files = {f["path"]: f for f in json.loads(report.read_text("utf-8"))["files"]}
    assert (files["big.html"]["status"], files["big.html"]["kind"]) == ("failed", "timeout")
    assert files["big.html"]["error"] == ("parsing took longer than 1 s (--file-timeout): stopped")
    assert (files["note.md"]["status"], files["note.md"]["chunks"]) == ("ok", 1)
    stored = chroma_client(persist).get_collection("kbase").get(include=["metadatas"])
    assert [m["source"] for m in stored["metadatas"]] == ["note.md"]
    assert ingest_cli(corpus, persist, "kbase", *args, "--file-timeout", "1") == 1  # lock freed
