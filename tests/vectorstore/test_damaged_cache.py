"""A damaged embedding cache is a cache: the run names it, sets it aside and goes on with a new
one (its vectors computed again); Chroma, healthy, is left as it is. A store whose rows are no
copies (the parents) still raises, and the fault names that file, not Chroma's."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

import ragingest
from ragingest.errors import EXIT_CORRUPT
from ragingest.vectorstore.cache import CACHE_FILE
from ragingest.vectorstore.records.kv import KVStore, is_damaged, kv_store
from ragingest.vectorstore.records.parents import PARENTS_FILE
from tests.helpers import ingest_cli

MINILM = "sentence-transformers/all-MiniLM-L6-v2"


def damage(path: Path) -> None:
    """16 random bytes at offset 100: the first page's b-tree header (the schema's root), once
    the WAL is in the file (as when the process that wrote it has ended)."""
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    with path.open("r+b") as file:
        file.seek(100)
        file.write(os.urandom(16))


@pytest.mark.slow
def test_a_damaged_cache_is_set_aside_and_the_run_goes_on(tmp_path):
    docs, persist = tmp_path / "docs", tmp_path / "kb"
    docs.mkdir()
    for name in ("pumps", "valves", "pipes"):
        (docs / f"{name}.md").write_text(f"# {name}\n\nA paragraph on {name}.\n")
    assert ingest_cli(docs, persist, "c", "--model", MINILM) == 0
    chroma = (persist / "chroma.sqlite3").read_bytes()
    damage(persist / CACHE_FILE)
    (docs / "pumps.md").write_text("# pumps\n\nA pump that hums has a stuck impeller.\n")

    report = ragingest.ingest([docs], persist_dir=persist, collection="c", model=MINILM)
    assert (report.error, report.updated + report.added, report.embeddings_computed) == ("", 1, 1)
    (aside,) = persist.glob(f"{CACHE_FILE}.damaged-*[0-9]")  # with its -wal, -shm
    (note,) = [n for n in report.notes if CACHE_FILE in n]
    assert f"{persist / CACHE_FILE} is damaged (" in note and aside.name in note
    with sqlite3.connect(persist / CACHE_FILE) as db:  # the new cache: the vector just computed
        assert db.execute("SELECT COUNT(*) FROM langchain_key_value_stores").fetchone() == (1,)
    assert (persist / "chroma.sqlite3").exists() and not list(persist.glob("chroma*.damaged-*"))
    assert len(chroma) > 0

    assert ingest_cli(docs, persist, "c", "--model", MINILM) == 0  # no loop: a plain run after
    hits = ragingest.retriever(persist, "c", k=1).invoke("stuck impeller")
    assert hits and "impeller" in hits[0].page_content


def test_a_cache_damaged_while_in_use_starts_over_and_other_stores_raise(tmp_path):
    cache = kv_store(tmp_path, None, "cache.sqlite", "ns", disposable=True)
    other = kv_store(tmp_path, None, "other.sqlite", "ns")
    cache.mset([("a", b"1")])
    other.mset([("a", b"1")])
    for store in (cache, other):
        store.engine.dispose()
        assert store.local_file is not None
        damage(store.local_file)
    assert cache.mget(["a"]) == [None]  # read from the new file: a miss, computed again
    cache.mset([("b", b"2")])
    assert (list(cache.yield_keys()), cache.count()) == (["b"], 1)
    assert len(cache.notes) == 1 and "cache.sqlite is damaged (" in cache.notes[0]
    with pytest.raises(Exception) as raised:
        other.mget(["a"])
    assert is_damaged(raised.value) and isinstance(other, KVStore)


def test_only_a_cache_commits_without_waiting_for_the_disk(tmp_path):
    """A cache (disposable: computed again) commits with ``synchronous = NORMAL``, also in the
    file that replaces a damaged one; a store whose rows are no copies waits for the disk."""
    cache = kv_store(tmp_path, None, "cache.sqlite", "ns", disposable=True)
    other = kv_store(tmp_path, None, "other.sqlite", "ns")

    def synchronous(store: KVStore) -> int:
        with store.engine.connect() as connection:
            return int(connection.exec_driver_sql("PRAGMA synchronous").scalar_one())

    assert (synchronous(cache), synchronous(other)) == (1, 2)  # NORMAL, FULL
    cache.mset([("a", b"1")])
    cache.engine.dispose()
    assert cache.local_file is not None
    damage(cache.local_file)
    assert cache.mget(["a"]) == [None] and len(cache.notes) == 1  # a new file
    assert synchronous(cache) == 1


@pytest.mark.slow
def test_a_damaged_file_of_ragingest_is_named_and_rebuild_repairs_it(tmp_path, capsys):
    """Not a cache (the parent sections): the fault names the file, not Chroma's, and
    ``--rebuild`` sets it aside with Chroma's and rebuilds all of it from the files."""
    docs, persist = tmp_path / "docs", tmp_path / "kb"
    docs.mkdir()
    for name in ("pumps", "valves", "pipes"):
        (docs / f"{name}.md").write_text(f"# {name}\n\nA paragraph on {name}.\n")
    assert ingest_cli(docs, persist, "c", "--model", MINILM) == 0
    damage(persist / PARENTS_FILE)
    (docs / "pumps.md").write_text("# pumps\n\nA pump that hums has a stuck impeller.\n")
    capsys.readouterr()
    assert ingest_cli(docs, persist, "c", "--model", MINILM) == EXIT_CORRUPT
    err = capsys.readouterr().err
    assert f"ragingest: {persist / PARENTS_FILE} is damaged (database disk image" in err
    assert "chroma.sqlite3 is damaged" not in err

    assert ingest_cli(docs, persist, "c", "--model", MINILM, "--rebuild") == 0
    assert len(list(persist.glob(f"{PARENTS_FILE}.damaged-*[0-9]"))) == 1
    assert len(list(persist.glob("chroma.sqlite3.damaged-*"))) == 1
    with sqlite3.connect(persist / PARENTS_FILE) as db:  # every file's sections, not one
        assert db.execute("SELECT COUNT(*) FROM langchain_key_value_stores").fetchone() == (3,)
    assert ingest_cli(docs, persist, "c", "--model", MINILM) == 0
