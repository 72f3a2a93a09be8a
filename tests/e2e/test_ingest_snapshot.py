"""Snapshot: ``ingest examples/`` (real model, real Chroma) stores exactly the recorded ids,
texts and metadata, and exactly the recorded parent sections. The copy of examples/ gets a
fixed mtime (a file without a front-matter date is dated by it); ``doc_date`` is still left
out of the comparison (its rendering depends on the machine's time zone). Regenerate after
an intended change with ``RAGINGEST_WRITE_SNAPSHOT=1 pytest tests/e2e/test_ingest_snapshot.py``
and list the change."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from ragingest.vectorstore.chroma.store import chroma_client
from ragingest.vectorstore.records.parents import ParentStore, parent_collections
from tests.conftest import DATA, EXAMPLES
from tests.helpers import ingest_cli

pytestmark = pytest.mark.slow

SNAPSHOT = DATA / "examples_snapshot.json"
VARYING = ("doc_date", "file_path")  # file_path: the tmp copy's place
# a file without a front-matter date is dated by its mtime, and the Chroma id hashes the
# metadata: a checkout's mtimes would change the ids, so the copy gets a fixed one
FIXED_MTIME = 1_767_225_600  # 2026-01-01T00:00:00Z


def stored_examples(tmp_path: Path) -> list[dict]:
    """Every chunk ``ingest examples/`` stores: id, text, metadata, sorted by id."""
    corpus = tmp_path / "examples"
    shutil.copytree(EXAMPLES, corpus)
    for path in corpus.rglob("*"):
        os.utime(path, (FIXED_MTIME, FIXED_MTIME))
    persist = tmp_path / "chroma"
    code = ingest_cli(corpus, persist, "snap")
    assert code == 0
    got = chroma_client(persist).get_collection("snap").get(include=["documents", "metadatas"])
    rows = [
        {
            "id": i,
            "text": text,
            "metadata": {k: v for k, v in sorted(meta.items()) if k not in VARYING},
        }
        for i, text, meta in zip(got["ids"], got["documents"], got["metadatas"], strict=True)
    ]
    rows.sort(key=lambda row: row["id"])
    for collection in parent_collections(persist):
        store = ParentStore(persist, collection)
        keys = list(store.yield_keys())
        for key, doc in zip(keys, store.mget(keys), strict=True):
            parent = [collection, key, doc.page_content]
            rows.append({"parent": parent, "metadata": _steady(doc.metadata)})
    return rows


def _steady(metadata: dict) -> dict:
    return {k: v for k, v in metadata.items() if k not in VARYING}


def test_ingest_examples_matches_the_snapshot(tmp_path):
    rows = stored_examples(tmp_path)
    if os.environ.get("RAGINGEST_WRITE_SNAPSHOT"):
        SNAPSHOT.write_text(json.dumps(rows, ensure_ascii=False, indent=1) + "\n", "utf-8")
    expected = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    assert [r.get("id", r.get("parent")) for r in rows] == [
        r.get("id", r.get("parent")) for r in expected
    ]
    assert rows == expected
