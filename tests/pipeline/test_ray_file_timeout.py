"""The per-file time bound on the Ray engine: a file whose parse runs past --file-timeout in
a Ray worker is stopped (its parser process killed) and reported failed with the local
engine's reason, the other files go in, the exit code is 1 and the lock is released. One
small run on a fresh local Ray runtime, one embedding actor."""

from __future__ import annotations

import importlib.util
import json

import pytest

from ragingest.cli.main import main
from ragingest.vectorstore.chroma.store import chroma_client

pytestmark = pytest.mark.slow

if importlib.util.find_spec("ray") is None:  # not imported here: ray_runtime sets its env first
    pytest.skip("ray is not installed", allow_module_level=True)

MODEL = "sentence-transformers/all-MiniLM-L6-v2"


def big_page(rows: int = 40_000) -> str:
    cells = "".join(f"<tr><td>Позиция {i}</td><td>Описание {i}</td></tr>" for i in range(rows))
    return f"<html><body><table>{cells}</table></body></html>"


def test_a_parse_past_the_file_timeout_on_ray_is_stopped_and_the_run_goes_on(tmp_path):
    corpus = tmp_path / "docs"
    corpus.mkdir()
    (corpus / "big.html").write_text(big_page(), "utf-8")  # ~2.5 MB: parses for many seconds
    (corpus / "note.md").write_text("# Заметка\n\nКороткий файл рядом с большим.\n", "utf-8")
    (corpus / "memo.txt").write_text("Альбомы выдают на три дня.\n", "utf-8")
    persist, report = tmp_path / "db", tmp_path / "report.json"
    args = ["ingest", str(corpus), "--persist-dir", str(persist), "--collection", "kbase"]
    args += ["--no-progress", "--model", MODEL, "--report", str(report), "--file-timeout", "1"]
    assert main([*args, "--engine", "ray", "--ray-actors", "1"]) == 1
    files = {f["path"]: f for f in json.loads(report.read_text("utf-8"))["files"]}
    assert (files["big.html"]["status"], files["big.html"]["kind"]) == ("failed", "timeout")
    assert files["big.html"]["error"] == "parsing took longer than 1 s (--file-timeout): stopped"
    assert [(files[n]["status"], files[n]["chunks"]) for n in ("memo.txt", "note.md")] == [
        ("ok", 1),
        ("ok", 1),
    ]
    stored = chroma_client(persist).get_collection("kbase").get(include=["metadatas"])
    assert sorted(m["source"] for m in stored["metadatas"]) == ["memo.txt", "note.md"]
    # the lock was released: the next run (local: no second Ray start) retries the failed file
    assert main(args) == 1
    again = {f["path"]: f["status"] for f in json.loads(report.read_text("utf-8"))["files"]}
    assert again == {"big.html": "failed", "memo.txt": "unchanged", "note.md": "unchanged"}
