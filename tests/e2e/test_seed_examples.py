"""Seeds 001 and 002: fixed windows with overlap, in characters and in words."""

from __future__ import annotations

import itertools

import pytest

from ragingest.splitters import FixedSizeSplitter

RETURN_TEXT = (
    "Возврат товара возможен в течение четырнадцати дней после покупки при сохранении чека"
)


def test_seed_001_character_windows():
    splitter = FixedSizeSplitter(6, 2, "chars")
    assert splitter.split_text("abcdefghijklmno") == ["abcdef", "efghij", "ijklmn", "mno"]


def test_seed_002_word_windows():
    parts = FixedSizeSplitter(6, 2, "words").split_text(RETURN_TEXT)
    assert parts == [
        "Возврат товара возможен в течение четырнадцати",
        "течение четырнадцати дней после покупки при",
        "покупки при сохранении чека",
    ]
    for left, right in itertools.pairwise(parts):
        assert left.split()[-2:] == right.split()[:2]
    assert parts[-1].endswith("чека")


def test_seed_000_step_is_size_minus_overlap():
    text = "x" * 1400
    chunks = FixedSizeSplitter(500, 50, "chars").split_chunks(text)
    assert [(c.start_index, c.end_index) for c in chunks] == [(0, 500), (450, 950), (900, 1400)]


@pytest.mark.parametrize(("size", "overlap"), [(6, 6), (6, 7), (6, -1), (0, 0)])
def test_overlap_must_be_below_size(size, overlap):
    with pytest.raises(ValueError, match="chunk_overlap"):
        FixedSizeSplitter(size, overlap, "words")


def test_langchain_split_documents_carries_offsets():
    from langchain_core.documents import Document

    docs = FixedSizeSplitter(6, 2, "chars").split_documents(
        [Document(page_content="abcdefghijklmno", metadata={"source": "a.txt"})]
    )
    assert [(d.metadata["start_index"], d.metadata["end_index"]) for d in docs] == [
        (0, 6),
        (4, 10),
        (8, 14),
        (12, 15),
    ]
    assert [d.metadata["chunk_index"] for d in docs] == [0, 1, 2, 3]
    assert {d.metadata["total_chunks"] for d in docs} == {4}
