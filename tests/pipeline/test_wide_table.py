"""One wide table never breaks its collection: what a chunk brings to Chroma is bounded
(``schema.MAX_EXTRA_KEYS``, ``MAX_KEY_CHARS``, ``MAX_VALUE_CHARS``), the rest stays in the text
with a note in the report, and the collection keeps working for status, query and ingest."""

from __future__ import annotations

import json
from pathlib import Path

from ragingest.cli.main import main
from ragingest.schema import (
    MAX_EXTRA_KEYS,
    MAX_VALUE_CHARS,
    SCHEMA,
    bound_extras,
    storable_problems,
)
from ragingest.splitters.factory import SplitSettings, base_splitter
from ragingest.vectorstore.chroma.store import chroma_client
from tests.splitting import split_file

MODEL = "intfloat/multilingual-e5-small"


def wide_csv(path: Path, columns: int) -> Path:
    header = ",".join(f"c{i}" for i in range(columns))
    path.write_text(header + "\n" + ",".join(str(i) for i in range(columns)) + "\n", "utf-8")
    return path


def test_bound_extras_keeps_schema_keys_and_the_first_extras():
    metadata = {"source": "a.csv", "_content_type": "catalogue", "x" * 65: 1}
    metadata |= {f"k{i}": i for i in range(MAX_EXTRA_KEYS + 5)}
    kept, note = bound_extras(metadata)
    assert list(kept) == ["source", "_content_type", *(f"k{i}" for i in range(MAX_EXTRA_KEYS))]
    assert note.startswith(f"6 fields not stored as metadata (over {MAX_EXTRA_KEYS} fields")
    assert bound_extras({"source": "a"}) == ({"source": "a"}, "")
    # Chroma stores a list of one scalar type ([1, 2]), not a mixed one
    too_long = {"title": "я" * (MAX_VALUE_CHARS + 1), "k": [1, "a"], "n": [1, 2]}
    assert storable_problems(too_long) == [
        "k is not a Chroma scalar: [1, 'a']",
        f"title over {MAX_VALUE_CHARS} characters",
    ]


def test_a_20000_column_csv_splits_within_the_bounds(tmp_path):
    path = wide_csv(tmp_path / "wide.csv", 20_000)
    settings = SplitSettings()
    chunks = split_file(path, tmp_path, base_splitter(settings, model=MODEL), settings=settings)
    assert chunks and not chunks.lost
    assert all(storable_problems(record.metadata) == [] for record in chunks)
    extras = {key for record in chunks for key in record.metadata if key not in SCHEMA}
    assert extras == {f"c{i}" for i in range(MAX_EXTRA_KEYS)}
    (note,) = chunks.notes
    assert note.startswith(f"{20_000 - MAX_EXTRA_KEYS} fields not stored as metadata")
    assert "c19999: 19999" in "".join(record.text for record in chunks)  # in the text still


def test_a_wide_csv_beside_good_files_leaves_a_working_collection(tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    wide_csv(docs / "wide.csv", MAX_EXTRA_KEYS * 3)
    (docs / "memo.md").write_text("# Отпуск\n\nЗаявление подают за две недели.\n", "utf-8")
    store = ["--persist-dir", str(tmp_path / "db"), "--collection", "wide"]
    report = tmp_path / "report.json"
    assert main(["ingest", str(docs), *store, "--no-progress", "--report", str(report)]) == 0
    files = {f["path"]: f for f in json.loads(report.read_text("utf-8"))["files"]}
    assert files["wide.csv"]["status"] == files["memo.md"]["status"] == "ok"
    assert files["wide.csv"]["notes"][0].startswith(f"{2 * MAX_EXTRA_KEYS} fields not stored")
    stored = chroma_client(tmp_path / "db").get_collection("wide").get(include=["metadatas"])
    assert max(len(set(m) - set(SCHEMA)) for m in stored["metadatas"]) == MAX_EXTRA_KEYS
    capsys.readouterr()
    assert main(["status", *store]) == 0
    assert main(["query", "заявление на отпуск", *store, "-k", "1"]) == 0
    assert "memo.md" in capsys.readouterr().out
    assert main(["ingest", str(docs), *store, "--no-progress"]) == 0


def test_a_chroma_compaction_failure_is_a_damaged_store_with_the_way_out(tmp_path):
    from ragingest.cli.faults import EXIT_CORRUPT, classify

    error = RuntimeError("Error in compaction: Failed to apply logs to the metadata segment")
    fault = classify(error, tmp_path)
    assert fault is not None and fault.exit_code == EXIT_CORRUPT
    assert "--rebuild" in fault.message
