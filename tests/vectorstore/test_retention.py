"""Deleted text leaves the disk within the run that deletes it, and the store stays bounded
over revisions (``vectorstore.retention``): a file rewritten five times, each revision's
text marked, real model, real Chroma on disk."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import ragingest
from ragingest.vectorstore.cache import CACHE_FILE
from ragingest.vectorstore.kv import KV_TABLE

pytestmark = pytest.mark.slow

SECTIONS = 40


def revision(n: int) -> str:
    return "\n\n".join(
        f"# Section {i}\n\nREV{n}MARK paragraph {i}: " + "the policy says this again. " * 25
        for i in range(SECTIONS)
    )


def rows(path: Path, table: str) -> int:
    with sqlite3.connect(path) as db:
        return int(db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def test_five_revisions_leave_no_deleted_text_and_stay_bounded(tmp_path: Path) -> None:
    root, persist = tmp_path / "root", tmp_path / "kb"
    root.mkdir()
    sizes = []
    for n in range(5):
        (root / "doc.md").write_text(revision(n), encoding="utf-8")
        report = ragingest.ingest([root], persist_dir=persist, collection="docs")
        assert not report.error and report.added > 0
        sizes.append(sum(p.stat().st_size for p in persist.rglob("*") if p.is_file()))
        live = report.added
    # every file of the directory (Chroma's, the cache, parents, lexical index, records):
    # no byte of an earlier revision's text
    files = [p for p in persist.rglob("*") if p.is_file()]
    for n in range(4):
        mark = f"REV{n}MARK".encode()
        assert not [p.name for p in files if mark in p.read_bytes()], n
    assert any(b"REV4MARK" in p.read_bytes() for p in files)  # the live text is there
    assert rows(persist / "chroma.sqlite3", "embeddings_queue") <= 100  # the log is purged
    # the cache holds exactly the live vectors (every text differs): none pruned that a
    # collection stores (Chroma keeps them normalized), none kept that it does not
    assert rows(persist / CACHE_FILE, KV_TABLE.name) == live
    assert max(sizes[1:]) < 1.5 * sizes[0], sizes  # not growing with revisions
    # still searchable after the purge
    found = ragingest.retriever(persist, "docs").invoke("REV4MARK paragraph 7")
    assert found and "REV4MARK" in found[0].page_content
