"""The per-file memory bound through a real run (local engine, real text loader): a file
whose parser process grows past --file-memory-mb is stopped and reported failed (kind
``memory``) with the reason, the other files go in, the exit code is 1."""

from __future__ import annotations

import json

import pytest

from ragingest.vectorstore.chroma.store import chroma_client
from tests.helpers import ingest_cli

pytestmark = pytest.mark.slow

MODEL = "sentence-transformers/all-MiniLM-L6-v2"
LINE = "Строка обычного текста про выдачу альбомов на три дня.\n"


def test_a_parse_past_the_memory_limit_is_stopped_and_the_run_goes_on(tmp_path):
    corpus = tmp_path / "docs"
    corpus.mkdir()
    # 30 MB of text: reading and decoding it takes ~200 MB, the idle parser ~50 MB
    (corpus / "big.txt").write_text(LINE * (30 * 2**20 // len(LINE.encode())), "utf-8")
    (corpus / "note.md").write_text("# Заметка\n\nКороткий файл рядом с большим.\n", "utf-8")
    persist, report = tmp_path / "db", tmp_path / "report.json"
    args = ["--model", MODEL, "--report", str(report)]
    assert ingest_cli(corpus, persist, "kbase", *args, "--file-memory-mb", "120") == 1
    files = {f["path"]: f for f in json.loads(report.read_text("utf-8"))["files"]}
    assert (files["big.txt"]["status"], files["big.txt"]["kind"]) == ("failed", "memory")
    assert files["big.txt"]["error"] == (
        "parsing needs more than 120 MB of memory (--file-memory-mb 120): stopped"
    )
    assert (files["note.md"]["status"], files["note.md"]["chunks"]) == ("ok", 1)
    stored = chroma_client(persist).get_collection("kbase").get(include=["metadatas"])
    assert [m["source"] for m in stored["metadatas"]] == ["note.md"]
