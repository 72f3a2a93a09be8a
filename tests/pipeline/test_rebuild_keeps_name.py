"""After ``--rebuild`` the Chroma collection carries the typed name again, so plain
``langchain_chroma.Chroma(collection_name=NAME, persist_directory=DIR)`` reads our chunks;
a kill at any step of that rename leaves a usable collection, and the next run finishes it
(real model, real Chroma, plain langchain_chroma in a process of its own)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import ragingest
from ragingest.cli.status import collection_status
from ragingest.vectorstore.chroma.store import chroma_client, open_store
from ragingest.vectorstore.lexical.index import LexicalIndex
from ragingest.vectorstore.records.parents import ParentStore
from tests.conftest import ROOT

pytestmark = pytest.mark.slow  # the real model, parser processes, Chroma on disk

PLAIN = """
import json, sys
from langchain_chroma import Chroma

store = Chroma(collection_name=sys.argv[2], persist_directory=sys.argv[1])
got = store.get(include=["metadatas"])
sources = sorted({m["source"] for m in got["metadatas"]})
print(json.dumps({"ids": len(got["ids"]), "sources": sources}))
"""


def _corpus(folder: Path) -> Path:
    folder.mkdir()
    for name in ("hr", "it", "ops"):
        sections = "\n\n".join(
            f"## Раздел {i}\n\nПравило {name} номер {i}: заявку подают за {i + 2} дня до срока. "
            "Руководитель согласует её в течение суток, а копия уходит в отдел кадров."
            for i in range(6)
        )
        (folder / f"{name}.md").write_text(f"# Регламент {name}\n\n{sections}\n", "utf-8")
    return folder


def _plain(persist: Path, name: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ANONYMIZED_TELEMETRY": "False"}
    done = subprocess.run(
        [sys.executable, "-c", PLAIN, str(persist), name],
        capture_output=True, text=True, env=env, timeout=300, check=True,
    )  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


def _run(corpus: Path, persist: Path, **options):
    return ragingest.ingest(
        [corpus], persist_dir=persist, collection="examples", progress=False, **options
    )


def _stored(persist: Path) -> int:
    return open_store(persist, "examples", create=False).count()


def test_plain_langchain_chroma_reads_a_rebuilt_collection(tmp_path):
    corpus, persist = _corpus(tmp_path / "docs"), tmp_path / "db"
    first = _run(corpus, persist)
    rebuilt = _run(corpus, persist, chunk_size=60, min_chunk_size=0, rebuild=True)
    assert rebuilt.rebuilt and rebuilt.collection == "examples"
    count = _stored(persist)
    assert count > first.added
    assert _plain(persist, "examples") == {"ids": count, "sources": ["hr.md", "it.md", "ops.md"]}
    names = sorted(c.name for c in chroma_client(persist).list_collections())
    assert names == ["examples"]
    assert LexicalIndex(persist, "examples").count() == count
    assert list(ParentStore(persist, "examples").yield_keys())
    assert not list(ParentStore(persist, "examples__1").yield_keys())
    again = _run(corpus, persist, chunk_size=60, min_chunk_size=0)  # settled: nothing to do
    assert (again.added, again.deleted, again.unchanged) == (0, 0, 3)
    hits = ragingest.retriever(persist, "examples").invoke("за сколько дней подают заявку")
    assert hits


STEPS = [
    "ragingest.pipeline.lifecycle.move_records",
    "ragingest.vectorstore.records.parents.ParentStore.copy_to",
    "ragingest.vectorstore.lexical.index.LexicalIndex.rename_to",
    "ragingest.vectorstore.chroma.backend.ChromaBackend.rename",  # the store's rename
    "ragingest.vectorstore.records.aliases.Catalog.set_live",
]


@pytest.mark.parametrize("step", STEPS, ids=[s.rsplit(".", 1)[-1] for s in STEPS])
def test_a_kill_while_renaming_leaves_a_usable_collection(tmp_path, monkeypatch, step):
    corpus, persist = _corpus(tmp_path / "docs"), tmp_path / "db"
    _run(corpus, persist)

    def killed(*_args, **_kwargs):
        raise KeyboardInterrupt(f"killed at {step}")

    with monkeypatch.context() as patch:
        patch.setattr(step, killed)
        with pytest.raises(KeyboardInterrupt):
            _run(corpus, persist, chunk_size=60, min_chunk_size=0, rebuild=True)
    count = _stored(persist)  # the rebuild is in: swapped before the rename began
    assert collection_status(persist, "examples")["chunks"] == count
    hits = ragingest.retriever(persist, "examples").invoke("за сколько дней подают заявку")
    assert hits
    finished = _run(corpus, persist, chunk_size=60, min_chunk_size=0)
    assert (finished.added, finished.deleted, finished.failed) == (0, 0, 0)
    assert _stored(persist) == count
    assert _plain(persist, "examples")["ids"] == count
    assert sorted(c.name for c in chroma_client(persist).list_collections()) == ["examples"]
    assert LexicalIndex(persist, "examples").count() == count
