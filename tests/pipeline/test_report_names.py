"""The report tells apart what looks alike: a file deleted while the run was under way is
reported gone (``deleted``: its chunks go), not failed; two names that are NFC and NFD
spellings of one name are shown with their combining marks escaped."""

from __future__ import annotations

import unicodedata

import ragingest
from ragingest.pipeline import runner
from ragingest.vectorstore.chroma.store import chroma_client


def test_a_file_deleted_during_the_run_is_gone_not_failed(tmp_path, monkeypatch):
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("a.md", "b.md", "c.md"):
        (docs / name).write_text(f"# {name}\n\nТекст файла {name}.\n", "utf-8")
    settings = dict(persist_dir=tmp_path / "db", collection="gone", progress=False)
    first = ragingest.ingest([str(docs)], **settings)
    assert first.exit_code == 0
    (docs / "b.md").write_text("# b.md\n\nНовый текст.\n", "utf-8")
    (docs / "d.md").write_text("# d.md\n\nНовый файл.\n", "utf-8")
    real = runner.make_plan

    def plan_then_delete(*args, **kwargs):
        plan = real(*args, **kwargs)
        (docs / "b.md").unlink()  # after the walk saw them, before they are read
        (docs / "d.md").unlink()
        return plan

    monkeypatch.setattr(runner, "make_plan", plan_then_delete)
    report = ragingest.ingest([str(docs)], **settings)
    statuses = {f.path: (f.status, f.error) for f in report.files}
    assert statuses["b.md"] == statuses["d.md"] == ("deleted", "deleted during the run")
    assert statuses["a.md"][0] == statuses["c.md"][0] == "unchanged"
    assert (report.failed, report.exit_code, report.files_deleted) == (0, 0, 1)
    stored = chroma_client(tmp_path / "db").get_collection("gone").get(include=["metadatas"])
    assert sorted(m["source"] for m in stored["metadatas"]) == ["a.md", "c.md"]


def test_nfc_and_nfd_twins_are_shown_apart(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    nfc, nfd = (unicodedata.normalize(form, "отчёт.md") for form in ("NFC", "NFD"))
    assert nfc != nfd
    (docs / nfc).write_text("# Отчёт\n\nПервый файл.\n", "utf-8")
    (docs / nfd).write_text("# Отчёт\n\nВторой файл.\n", "utf-8")
    report = ragingest.ingest(
        [str(docs)], persist_dir=tmp_path / "db", collection="twins", progress=False
    )
    shown = {f["path"]: f["shown"] for f in report.to_dict()["files"]}
    assert shown == {nfc: "отчёт.md", nfd: "отче\\u0308т.md"}
    assert "NOTE names that look the same (combining marks escaped): отче\\u0308т.md, отчёт.md" in (
        report.summary()
    )
