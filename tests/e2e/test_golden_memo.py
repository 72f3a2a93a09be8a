"""The published coordinates on the 430-code-point library memo, via the `inspect` command."""

from __future__ import annotations

import json

import pytest

from ragingest.cli.main import main
from tests.conftest import memo_path

FIXED_CASES = [(120, 0), (120, 30), (220, 0)]


def run_inspect(capsys, *args: str) -> dict:
    assert main(["inspect", str(memo_path()), "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_memo_is_430_code_points(memo):
    assert len(memo) == 430


@pytest.mark.parametrize(("size", "overlap"), FIXED_CASES)
def test_fixed_windows_and_contains_match_golden(capsys, golden, size, overlap):
    case = next(
        c
        for c in golden["cases"]
        if c["strategy"] == "fixed" and (c["chunk_size"], c["chunk_overlap"]) == (size, overlap)
    )
    sentences = golden["sentences"]
    contains = [a for name in "ABCD" for a in ("--contains", sentences[name]["text"])]
    result = run_inspect(
        capsys,
        "--strategy",
        "fixed",
        "--unit",
        "chars",
        "--chunk-size",
        str(size),
        "--chunk-overlap",
        str(overlap),
        *contains,
    )
    spans = [[c["start_index"], c["end_index"]] for c in result["chunks"]]
    assert spans == case["spans"]
    found = {name: item["chunks"] for name, item in zip("ABCD", result["contains"], strict=True)}
    assert found == case["sentence_whole_in_chunk"]
    assert result["length"] == 430


def test_heading_sections_start_at_golden_offsets(capsys, golden):
    result = run_inspect(
        capsys,
        "--strategy",
        "heading",
        "--unit",
        "chars",
        "--chunk-size",
        "1000",
        "--min-chunk-size",
        "0",
    )
    case = next(c for c in golden["cases"] if c["strategy"] == "markdown_headings")
    assert [c["start_index"] for c in result["chunks"]] == [s[0] for s in case["spans"]]
    # trailing newline trimmed, offsets still exact
    assert [c["end_index"] for c in result["chunks"]] == [189, 321, 429]
    assert [c["metadata"]["section_path"] for c in result["chunks"]] == [
        "Выдача книг",
        "Продление",
        "Читальный зал",
    ]


def test_sentence_positions_match_golden(memo, golden):
    for sentence in golden["sentences"].values():
        assert memo[sentence["start"] : sentence["end"]] == sentence["text"]


def test_default_settings_keep_the_small_memo_whole(capsys, memo):
    result = run_inspect(capsys)
    assert len(result["chunks"]) == 1
    chunk = result["chunks"][0]
    assert (chunk["start_index"], chunk["end_index"]) == (0, 429)
    assert chunk["text"] == memo[:429]
    assert chunk["metadata"]["strategy"] == "heading"
