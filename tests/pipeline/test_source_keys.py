"""Source keys across roots: two roots holding the same file names never share a key (each
root's keys start with its name), a one-root run keeps the keys it always had, and a re-run
after an edit keeps every file's chunks (real model, real Chroma)."""

from __future__ import annotations

from pathlib import Path

import pytest

import ragingest
from ragingest.loaders.inputs.source_keys import source_bases
from ragingest.loaders.inputs.walk import walk
from ragingest.vectorstore.chroma.store import chroma_client


def _readme(folder: Path, body: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "README.md").write_text(f"# {folder.name}\n\n{body}\n", encoding="utf-8")


def _sources(persist: Path, collection: str) -> list[str]:
    stored = chroma_client(persist).get_collection(collection).get(include=["metadatas"])
    return sorted(m["source"] for m in stored["metadatas"])


def test_keys_one_root_unchanged_several_prefixed(tmp_path):
    _readme(tmp_path / "coll" / "hr", "Отпуск оформляют за две недели.")
    _readme(tmp_path / "coll" / "it", "Пароль меняют раз в квартал.")
    (tmp_path / "a" / "docs").mkdir(parents=True)
    (tmp_path / "b" / "docs").mkdir(parents=True)
    for side in "ab":
        (tmp_path / side / "docs" / "x.md").write_text("x", encoding="utf-8")
    hr, it = tmp_path / "coll" / "hr", tmp_path / "coll" / "it"
    assert [f.source for f in walk([hr])] == ["README.md"]
    assert [f.source for f in walk([hr / "README.md"])] == ["README.md"]
    assert [f.source for f in walk([hr, it])] == ["hr/README.md", "it/README.md"]
    docs = [tmp_path / "a" / "docs", tmp_path / "b" / "docs"]
    assert [f.source for f in walk(docs)] == ["a/docs/x.md", "b/docs/x.md"]
    # two files named alike get their folders' names; one then reads like a key under the
    # folder root "hr", so both lengthen again
    file = tmp_path / "a" / "hr" / "README.md"
    _readme(file.parent, "другой")
    other = tmp_path / "b" / "README.md"
    other.write_text("ещё", encoding="utf-8")
    assert [f.source for f in walk([hr, file, other])] == [
        "coll/hr/README.md",
        "a/hr/README.md",
        "b/README.md",
    ]
    assert source_bases([hr, it]) == [tmp_path / "coll", tmp_path / "coll"]


@pytest.mark.slow
def test_two_roots_with_the_same_names_keep_both_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _readme(Path("coll/hr"), "Отпуск оформляют за две недели до начала.")
    _readme(Path("coll/it"), "Пароль от почты меняют раз в квартал.")
    persist = tmp_path / "db"

    def run():
        return ragingest.ingest(
            ["coll/hr", "coll/it"], persist_dir=persist, collection="two-roots", progress=False
        )

    first = run()
    assert (first.added, first.deleted, first.failed) == (2, 0, 0)
    assert _sources(persist, "two-roots") == ["hr/README.md", "it/README.md"]
    _readme(Path("coll/hr"), "Отпуск оформляют за три недели до начала.")
    edited = run()
    assert (edited.added, edited.skipped, edited.deleted, edited.files_deleted) == (1, 1, 1, 0)
    for _ in range(3):
        again = run()
        assert (again.added, again.skipped, again.deleted, again.unchanged) == (0, 2, 0, 2)
        assert _sources(persist, "two-roots") == ["hr/README.md", "it/README.md"]
    texts = chroma_client(persist).get_collection("two-roots").get()["documents"]
    assert any("три недели" in t for t in texts) and any("раз в квартал" in t for t in texts)
