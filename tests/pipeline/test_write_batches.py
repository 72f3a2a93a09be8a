"""A write group reaches the store in as few writes as its size allows (``writer.index_batch``),
and storing it so changes nothing that is stored: the chunks, their vectors and metadata, the
record manager's keys and sources, the journal, the lexical rows, the parent sections and the
embedding cache are those of writes of ``write_batch_size`` chunks each."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

import ragingest
from ragingest.pipeline import writer
from ragingest.vectorstore.collection import Collection
from ragingest.vectorstore.records.aliases import resolve_collection
from ragingest.vectorstore.records.record_manager import IndexRecords, record_manager
from tests.stored import stored_rows

pytestmark = pytest.mark.slow

SECTION = "Правило {n}: заявку на пропуск {f} подают за {n} дней, с подписью начальника смены. "


def test_index_batches_are_as_few_as_keep_each_under_twice_the_write_batch():
    sizes = [0, 1, 255, 256, 270, 511, 512, 513, 1256]
    assert [writer.index_batch(n, 256) for n in sizes] == [1, 1, 255, 256, 270, 511, 256, 257, 314]
    # no merged batch over the cap (a record-manager statement's variables): the user's size
    assert [writer.index_batch(n, 6000) for n in (9000, 11999)] == [9000, 6000]
    assert writer.index_batch(30000, 20000) == 20000


def _corpus(folder: Path) -> Path:
    folder.mkdir()
    for f in range(6):
        body = "\n\n".join(f"## Раздел {n}\n\n" + SECTION.format(n=n, f=f) * 3 for n in range(3))
        (folder / f"f{f}.md").write_text(f"# Памятка {f}\n\n{body}\n", encoding="utf-8")
    return folder


def _sqlite_rows(path: Path, query: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as db:
        return sorted(db.execute(query).fetchall())


def _stored(persist: Path) -> dict[str, Any]:
    """Everything a run stores, but the times and random row ids it stamps."""
    physical = resolve_collection(persist, "c")
    manager = record_manager(persist, physical)
    with sqlite3.connect(persist / "ragingest_lexical.sqlite") as db:
        tables = [row[0] for row in db.execute("SELECT text_table FROM lexical_collections")]
    (text,) = tables
    return {
        "chunks": stored_rows(persist, "c", "chroma", vectors=True),
        "records": sorted(
            (key, group)
            for group in manager.list_groups()
            for key in manager.list_keys(group_ids=[group])
        ),
        "journal": manager.journal_items(),
        "lexical": _sqlite_rows(
            persist / "ragingest_lexical.sqlite",
            f"SELECT i.n, i.id, t.terms FROM {text}_ids i JOIN {text} t ON t.rowid = i.n",
        ),
        "parents": _sqlite_rows(
            persist / "ragingest_parents.sqlite",
            "SELECT namespace, key, value FROM langchain_key_value_stores",
        ),
        "cache": _sqlite_rows(
            persist / "ragingest_embeddings.sqlite",
            "SELECT namespace, key, value FROM langchain_key_value_stores",
        ),
    }


def test_a_group_is_one_store_write_and_stores_what_write_sized_batches_store(
    tmp_path, monkeypatch
):
    docs = _corpus(tmp_path / "docs")
    settings = dict(collection="c", progress=False, chunk_size=60, write_batch_size=8)
    writes: list[int] = []
    add = Collection.add_documents

    def counted(self: Collection, documents: list, **kwargs: Any) -> list[str]:
        writes.append(len(documents))
        return add(self, documents, **kwargs)

    monkeypatch.setattr(Collection, "add_documents", counted)
    report = ragingest.ingest([str(docs)], persist_dir=tmp_path / "grouped", **settings)
    grouped = list(writes)
    assert report.added == sum(grouped) and report.added > 16
    assert all(8 <= n < 16 for n in grouped[:-1])  # one write per group of whole files

    writes.clear()
    monkeypatch.setattr(writer, "index_batch", lambda chunks, size: size)  # the old batches
    ragingest.ingest([str(docs)], persist_dir=tmp_path / "sized", **settings)
    assert max(writes) == 8 and len(writes) > len(grouped)
    assert _stored(tmp_path / "grouped") == _stored(tmp_path / "sized")


def test_the_end_of_a_run_reads_no_records_of_the_sources_it_keeps(tmp_path, monkeypatch):
    """Deleting what a run did not see reads the records only of sources it did not keep (to
    tell ragingest's from other code's): a first run reads none."""
    docs = _corpus(tmp_path / "docs")
    read: list[list[str]] = []
    list_keys = IndexRecords.list_keys

    def counted(self: IndexRecords, **kwargs: Any) -> list[str]:
        if "before" not in kwargs:  # index()'s own cleanup lists by time
            read.append(list(kwargs.get("group_ids") or []))
        return list_keys(self, **kwargs)

    monkeypatch.setattr(IndexRecords, "list_keys", counted)
    settings = dict(persist_dir=tmp_path / "db", collection="c", progress=False)
    ragingest.ingest([str(docs)], **settings)
    assert read == []
    (docs / "f0.md").unlink()
    report = ragingest.ingest([str(docs)], **settings)
    assert read == [["f0.md"]]  # its keys, to delete them (its file state says it is ours)
    assert report.deleted > 0
