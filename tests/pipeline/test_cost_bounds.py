"""Cost has a bound and a word: a file past ``--max-chunks-per-file`` is reported failed with
the bound and how to raise it (the other files go in); the progress bar shows the chunks and
the estimated time before a file is embedded; a run stopped in the middle of a long file keeps
what it embedded (written a batch at a time; vectors also in the embedding cache), so the next
run embeds only the rest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ragingest
from ragingest.cli.main import main
from ragingest.models.encoder import ModelEncoder
from ragingest.pipeline.pace import Pace
from ragingest.vectorstore.chroma.store import chroma_client


def long_file(path: Path, sections: int) -> Path:
    body = "\n\n".join(
        f"## Раздел {i}\n\nПравило номер {i}: заявка подаётся за {i} дней, с подписью {i}."
        for i in range(sections)
    )
    path.write_text("# Регламент\n\n" + body + "\n", "utf-8")
    return path


def test_a_file_past_the_chunk_bound_is_named_with_the_way_out(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    long_file(docs / "long.md", 40)
    (docs / "memo.md").write_text("# Памятка\n\nКороткий файл.\n", "utf-8")
    report = tmp_path / "report.json"
    store = ["--persist-dir", str(tmp_path / "db"), "--collection", "bounded"]
    args = ["ingest", str(docs), *store, "--no-progress", "--report", str(report)]
    assert main([*args, "--chunk-size", "20", "--max-chunks-per-file", "5"]) == 1
    files = {f["path"]: f for f in json.loads(report.read_text("utf-8"))["files"]}
    assert (files["long.md"]["status"], files["long.md"]["kind"]) == ("failed", "too_many_chunks")
    assert files["long.md"]["error"].startswith(
        "splits into more than 5 chunks (--max-chunks-per-file 5): not embedded; to ingest it, "
        "raise the bound (e.g. --max-chunks-per-file 50"
    )
    assert files["memo.md"]["status"] == "ok"
    stored = chroma_client(tmp_path / "db").get_collection("bounded").get(include=["metadatas"])
    assert {m["source"] for m in stored["metadatas"]} == {"memo.md"}


def test_pace_shows_chunks_then_an_estimate():
    pace = Pace()
    assert pace.estimate(300) == "300 chunks"
    pace.wrote(100, 20.0)
    assert pace.estimate(300) == "300 chunks, ~60 s"


def test_a_stopped_run_keeps_the_vectors_it_computed(tmp_path, monkeypatch):
    docs = tmp_path / "docs"
    docs.mkdir()
    long_file(docs / "long.md", 30)
    settings = dict(persist_dir=tmp_path / "db", collection="resume", progress=False)
    settings |= dict(chunk_size=40, write_batch_size=8, embed_batch_size=8)  # 8 texts a model call
    real = ModelEncoder.embed_documents
    calls: list[int] = []

    def stop_on_the_third_batch(self, texts):
        calls.append(len(texts))
        if len(calls) == 3:
            raise KeyboardInterrupt  # Ctrl-C (or a kill) while the file is being embedded
        return real(self, texts)

    monkeypatch.setattr(ModelEncoder, "embed_documents", stop_on_the_third_batch)
    with pytest.raises(KeyboardInterrupt):
        ragingest.ingest([str(docs)], **settings)
    done_before = sum(calls[:2])
    assert done_before > 0
    monkeypatch.setattr(ModelEncoder, "embed_documents", real)
    report = ragingest.ingest([str(docs)], **settings)
    (result,) = report.files
    assert result.status == "ok" and result.chunks > done_before + calls[2]
    # the first two batches are not embedded again: in Chroma already (written batch by
    # batch), or else in the embedding cache
    assert report.skipped + report.embeddings_cached == done_before
    assert report.embeddings_computed == result.chunks - done_before


def test_a_file_failed_past_a_bound_is_not_tried_again_until_it_changes(tmp_path, count_parses):
    docs = tmp_path / "docs"
    docs.mkdir()
    long_file(docs / "long.md", 30)
    (docs / "memo.md").write_text("# Памятка\n\nКороткий файл.\n", "utf-8")
    settings = dict(persist_dir=tmp_path / "db", collection="memo", progress=False)
    settings |= dict(chunk_size=20, max_chunks_per_file=5)

    def run(**extra):
        count_parses.clear()
        report = ragingest.ingest([str(docs)], **settings, **extra)
        return {f.path: (f.status, f.kind) for f in report.files}, list(count_parses)

    files, parsed = run()
    assert files["long.md"] == ("failed", "too_many_chunks") and "long.md" in parsed
    files, parsed = run()  # same bytes: reported, not parsed
    assert files["long.md"] == ("failed", "too_many_chunks") and parsed == []
    files, parsed = run(retry_failed=True)
    assert files["long.md"] == ("failed", "too_many_chunks") and parsed == ["long.md"]
    long_file(docs / "long.md", 2)  # changed: tried, and now it fits
    files, parsed = run()
    assert files["long.md"] == ("ok", "") and parsed == ["long.md"]
