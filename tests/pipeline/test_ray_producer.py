"""The Ray engine's producer, called directly (no Ray): the rows its map functions emit."""

from __future__ import annotations

import hashlib
import pickle

import numpy as np
import pytest

from ragingest.defaults import MODEL
from ragingest.loaders.cleaning.corpus import FileDigest
from ragingest.models.resolve import load_model_info
from ragingest.pipeline.options import IngestOptions
from ragingest.pipeline.ray_tasks import in_sorted, scan_batch, split_batch
from ragingest.schema import ChunkRecord
from ragingest.splitters.factory import SplitSettings, base_splitter
from ragingest.vectorstore.cache import text_hashes
from tests.splitting import split_file

pytestmark = pytest.mark.slow

TEXT = (
    "# Правила\n\n## Выдача\n\nАльбомы выдают на три дня.\n\n## Продление\n\nПродление по заявке.\n"
)


def _batch(tmp_path, names: list[str]) -> dict[str, list[str]]:
    return {
        "path": [str(tmp_path / n) for n in names],
        "root": [str(tmp_path)] * len(names),
        "source": names,
    }


def test_text_hashes_are_the_cache_key_prefix():
    texts = ["один", "два"]
    expected = [int(hashlib.sha256(t.encode()).hexdigest()[:16], 16) for t in texts]
    assert text_hashes(texts).tolist() == expected
    table = np.array(sorted(expected[:1]), dtype=np.uint64)
    assert in_sorted(text_hashes(texts), table).tolist() == [True, False]
    assert in_sorted(text_hashes(texts), np.zeros(0, dtype=np.uint64)).tolist() == [False, False]


def test_scan_batch_gives_each_files_digest(tmp_path):
    para = "Этот абзац повторяется в каждом письме отдела обслуживания читателей."
    text = f"# A\n\n{para}\n\n{para}\n"
    (tmp_path / "a.md").write_text(text, encoding="utf-8")
    (tmp_path / "b.xyz").write_text("no loader", encoding="utf-8")
    out = scan_batch(_batch(tmp_path, ["a.md", "b.xyz"]), IngestOptions(tmp_path, "kbase"))
    assert out["ok"] == [True, False]
    name, found = pickle.loads(out["digests"][0])
    assert (name, found) == (str(tmp_path / "a.md"), FileDigest.of([(text, ())]))
    assert found.blocks == 2  # the heading and the paragraph (twice in the file, once here)
    assert len(found.margins) == 1
    assert out["digests"][1] == b""


def test_split_batch_rows_are_the_local_split_with_marks(tmp_path):
    (tmp_path / "a.md").write_text(TEXT, encoding="utf-8")
    (tmp_path / "broken.docx").write_bytes(b"not a zip")
    options = IngestOptions(tmp_path, "kbase", split=SplitSettings(min_chunk_size=0))
    base = base_splitter(options.split, info=load_model_info(MODEL))
    local = split_file(tmp_path / "a.md", tmp_path, base, settings=options.split)
    cached = np.sort(text_hashes([local[0].embed_text]))  # the first text is in the cache
    out = split_batch(
        _batch(tmp_path, ["a.md", "broken.docx"]), options, MODEL, None, cached
    )

    assert out["path"] == [str(tmp_path / "a.md")] * (1 + len(local)) + [
        str(tmp_path / "broken.docx")
    ]
    assert out["seq"] == [-1, *range(len(local)), -1]
    assert out["count"] == [len(local)] * (1 + len(local)) + [0]
    error, (cleaning, notes, lost, removed, copies) = pickle.loads(out["blob"][0])
    assert error is None and cleaning == local.cleaning
    assert (notes, lost) == (local.notes, local.lost) == ([], False)
    assert (removed, copies) == (local.removed, local.copies) == ([], [])
    records = [pickle.loads(blob) for blob in out["blob"][1 : 1 + len(local)]]
    assert all(isinstance(r, ChunkRecord) for r in records)
    assert [(r.id, r.text, r.metadata) for r in records] == [
        (r.id, r.text, r.metadata) for r in local
    ]
    # marked for embedding: not in the cache snapshot, not earlier in the batch
    assert out["text"][1 : 1 + len(local)] == [""] + [r.embed_text for r in local[1:]]
    (kind, path, reason), _ = pickle.loads(out["blob"][-1])
    assert kind.__name__ == "ParseError" and path.endswith("broken.docx") and "DOCX" in reason
