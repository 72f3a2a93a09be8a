"""``inspect FILE --json`` shows exactly the chunks ``ingest`` stores for that file: the same
texts, the same ``[start, end)``, in the same order, for every file of ``examples/``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ragingest.cli.main import main
from ragingest.vectorstore.chroma.store import chroma_client
from tests.conftest import EXAMPLES

pytestmark = pytest.mark.slow

FILES = sorted(p.relative_to(EXAMPLES).as_posix() for p in EXAMPLES.rglob("*") if p.is_file())


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> tuple[Path, dict[str, list[tuple[str, int, int]]]]:
    """The examples' copy and, per source, its stored chunks in file order (document, then
    chunk: a catalogue row is a document of its own, numbered by ``row``)."""
    corpus = tmp_path_factory.mktemp("examples") / "examples"
    shutil.copytree(EXAMPLES, corpus)
    persist = tmp_path_factory.mktemp("chroma")
    args = ["--persist-dir", str(persist), "--collection", "kbase", "--no-progress"]
    assert main(["ingest", str(corpus), *args]) == 0
    got = chroma_client(persist).get_collection("kbase").get(include=["documents", "metadatas"])
    rows: dict[str, list] = {}
    for text, meta in zip(got["documents"], got["metadatas"], strict=True):
        order = (meta.get("row", 0), meta["chunk_index"])
        rows.setdefault(meta["source"], []).append((order, text, meta))
    return corpus, {
        source: [(text, m["start_index"], m["end_index"]) for _o, text, m in sorted(found)]
        for source, found in rows.items()
    }


def test_every_example_file_is_stored():
    assert len(FILES) == 13


@pytest.mark.parametrize("name", FILES)
def test_inspect_shows_the_stored_chunks(name, stored, capsys):
    corpus, chunks = stored
    capsys.readouterr()
    assert main(["inspect", str(corpus / name), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    shown = [(c["text"], c["start_index"], c["end_index"]) for c in result["chunks"]]
    assert shown == chunks[name]
    assert [c["metadata"]["content_type"] for c in result["chunks"]] == [
        d["content_type"] for d in result["documents"] for _ in range(d["chunks"])
    ]
