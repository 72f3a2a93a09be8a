"""Collections a run must not harm: ``--rebuild`` never takes nor drops a collection another
name holds (``docs__1`` typed by someone else), and invalid settings are refused before any
collection is created, so the corrected run needs no ``--rebuild``."""

from __future__ import annotations

from pathlib import Path

import pytest

import ragingest
from ragingest.errors import CollectionMismatchError
from ragingest.vectorstore.chroma.store import chroma_client
from ragingest.vectorstore.lexical.index import LexicalIndex
from ragingest.vectorstore.records.parents import ParentStore
from tests.helpers import ingest_cli

pytestmark = pytest.mark.slow


def _folder(root: Path, name: str, topic: str) -> Path:
    folder = root / name
    folder.mkdir()
    sections = "\n\n".join(
        f"## Раздел {i}\n\n{topic} номер {i} подают за {i + 2} дня." for i in range(4)
    )
    (folder / f"{name}.md").write_text(f"# {topic}\n\n{sections}\n", "utf-8")
    return folder


def _sources(persist: Path, physical: str) -> set[str]:
    got = chroma_client(persist).get_collection(physical).get(include=["metadatas"])
    return {m["source"] for m in got["metadatas"]}


def test_rebuild_never_takes_a_collection_another_name_holds(tmp_path):
    a, b = _folder(tmp_path, "a", "Заявку"), _folder(tmp_path, "b", "Отчёт")
    db = tmp_path / "db"
    assert ingest_cli(a, db, "docs") == 0
    assert ingest_cli(b, db, "docs__1") == 0
    count = LexicalIndex(db, "docs__1").count()
    assert count and _sources(db, "docs__1") == {"b.md"}
    assert ingest_cli(a, db, "docs", "--chunk-size", "120", "--rebuild") == 0
    assert _sources(db, "docs__1") == {"b.md"}  # records, parents, lexical index all kept
    assert LexicalIndex(db, "docs__1").count() == count
    assert list(ParentStore(db, "docs__1").yield_keys())
    assert _sources(db, "docs") == {"a.md"}
    assert ingest_cli(b, db, "docs__1") == 0  # its next run: everything unchanged
    # a second rebuild skips it again
    report = ragingest.ingest([a], persist_dir=db, collection="docs", chunk_size=90,
                              rebuild=True)  # fmt: skip
    assert report.rebuilt
    names = {c.name for c in chroma_client(db).list_collections()}
    assert names == {"docs", "docs__1"}


def test_a_name_held_by_a_rebuild_in_progress_is_refused(tmp_path, monkeypatch):
    a, b = _folder(tmp_path, "a", "Заявку"), _folder(tmp_path, "b", "Отчёт")
    db = tmp_path / "db"
    assert ingest_cli(a, db, "docs") == 0

    def killed(self, target):  # the rebuild stops before its swap
        raise KeyboardInterrupt

    monkeypatch.setattr("ragingest.pipeline.lifecycle.Lifecycle.finish", killed)
    with pytest.raises(KeyboardInterrupt):
        ragingest.ingest([a], persist_dir=db, collection="docs", chunk_size=120, rebuild=True)
    monkeypatch.undo()
    building = {c.name for c in chroma_client(db).list_collections()} - {"docs"}
    (physical,) = building
    with pytest.raises(CollectionMismatchError, match="held by the rebuild of 'docs'"):
        ragingest.ingest([b], persist_dir=db, collection=physical)
    assert _sources(db, physical) == {"a.md"}


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"chunk_overlap": 500}, "chunk_overlap 500 must be under chunk_size"),
        ({"chunk_size": -5}, "chunk_size must be a whole number >= 1, got -5"),
        ({"chunk_size": "abc"}, "chunk_size must be a whole number >= 1, got 'abc'"),
        ({"chunk_size": 2000, "chunk_overlap": 600}, "under chunk_size 5"),  # the model's cap
        ({"split_levels": (2, 9)}, "split_levels must be heading levels 1-6"),
    ],
)
def test_invalid_settings_are_refused_before_a_collection_exists(tmp_path, settings, message):
    a = _folder(tmp_path, "a", "Заявку")
    db = tmp_path / "db"
    with pytest.raises(ValueError, match=message):
        ragingest.ingest([a], persist_dir=db, collection="kb", **settings)
    if db.exists():
        assert not chroma_client(db).list_collections()
    report = ragingest.ingest([a], persist_dir=db, collection="kb", chunk_size=300)
    assert report.files[0].status == "ok" and not report.rebuilt  # no --rebuild needed


def test_invalid_settings_on_the_command_line_are_one_line_and_exit_2(tmp_path, capsys):
    a = _folder(tmp_path, "a", "Заявку")
    assert ingest_cli(a, tmp_path / "db", "kb", "--chunk-overlap", "500") == 2
    assert "chunk_overlap 500 must be under chunk_size" in capsys.readouterr().err
    assert not (tmp_path / "db").exists()
    assert ingest_cli(a, tmp_path / "db", "kb") == 0
