"""Parent sections follow their chunks: editing or deleting a file, and rebuilding (which
drops the old physical collection) leave no parent row that no stored chunk refers to."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragingest.cli.main import main
from ragingest.vectorstore.chroma.store import chroma_client
from ragingest.vectorstore.records.parents import ParentStore, parent_collections

pytestmark = pytest.mark.slow

SECTION = "Правило {n}: читальный зал открыт с {h}:00, книги выдают на {d} дней под подпись. "


def write(path: Path, sections: list[int]) -> None:
    body = "\n\n".join(
        f"## Раздел {n}\n\n" + SECTION.format(n=n, h=8 + n, d=n + 2) * 6 for n in sections
    )
    path.write_text(f"# Памятка {path.stem}\n\n{body}\n", encoding="utf-8")


def parent_rows(persist: Path) -> dict[str, set[str]]:
    found = {
        collection: set(ParentStore(persist, collection).yield_keys())
        for collection in parent_collections(persist)
    }
    return {collection: keys for collection, keys in found.items() if keys}


def referenced(persist: Path) -> dict[str, set[str]]:
    client = chroma_client(persist)
    return {
        c.name: {m["parent_id"] for m in client.get_collection(c.name).get()["metadatas"]}
        for c in client.list_collections()
    }


def ingest(corpus: Path, persist: Path, *extra: str) -> None:
    args = ["--persist-dir", str(persist), "--collection", "kbase", "--no-progress"]
    assert main(["ingest", str(corpus), *args, *extra]) == 0


def test_no_orphan_parent_rows(tmp_path):
    corpus, persist = tmp_path / "docs", tmp_path / "chroma"
    corpus.mkdir()
    write(corpus / "a.md", [1, 2, 3])
    write(corpus / "b.md", [4, 5])
    ingest(corpus, persist)
    first = parent_rows(persist)
    assert first == referenced(persist) and len(first["kbase"]) >= 5

    write(corpus / "a.md", [0, 1, 3])  # new section first: every span of a.md moves
    ingest(corpus, persist)
    edited = parent_rows(persist)
    assert edited == referenced(persist)
    assert edited["kbase"] - first["kbase"]  # a.md's new parents in, its old ones out

    (corpus / "b.md").unlink()
    ingest(corpus, persist)
    assert parent_rows(persist) == referenced(persist)
    kept = parent_rows(persist)["kbase"]

    # built as kbase__1, the old kbase dropped, kbase__1 renamed kbase
    ingest(corpus, persist, "--chunk-size", "64", "--rebuild")
    rows = parent_rows(persist)
    assert set(rows) == {"kbase"} and rows == referenced(persist)
    assert rows["kbase"] and kept
