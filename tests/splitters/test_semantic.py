"""Semantic fallback: boundaries where sentence similarity drops, sizes still in tokens."""

from __future__ import annotations

import numpy as np
import pytest

from ragingest.splitters import HeadingFirstSplitter
from ragingest.splitters.semantic import SemanticBoundaries
from ragingest.splitters.structure import analyze

CATS = [f"Cats sleep in the sun number {i}." for i in range(6)]
TAXES = [f"Taxes are filed in April form {i}." for i in range(6)]
TEXT = " ".join(CATS + TAXES) + "\n"


def topic_embed(texts: list[str]) -> np.ndarray:
    """A stand-in model: one axis per topic word, so similarity drops where topics change."""
    rows = [[t.count("Cats"), t.count("Taxes"), 0.1] for t in texts]
    return np.asarray(rows, dtype=np.float32)


def test_breakpoint_at_the_topic_shift():
    boundaries = SemanticBoundaries(topic_embed, percentile=90, window=0)
    cuts = boundaries.breakpoints(TEXT, 0, len(TEXT), analyze(TEXT))
    assert cuts == [TEXT.index(TAXES[0])]


def test_window_smooths_but_keeps_the_shift():
    boundaries = SemanticBoundaries(topic_embed, percentile=95, window=1)
    cuts = boundaries.breakpoints(TEXT, 0, len(TEXT), analyze(TEXT))
    assert TEXT.index(TAXES[0]) in cuts


def test_short_spans_get_no_breakpoints():
    text = "One. Two. Three."
    assert SemanticBoundaries(topic_embed).breakpoints(text, 0, len(text), analyze(text)) == []
    with pytest.raises(ValueError):
        SemanticBoundaries(topic_embed, percentile=100)


def test_heading_first_uses_it_as_the_paragraph_fallback(e5_info):
    splitter = HeadingFirstSplitter(
        60,
        0,
        0,
        tokenizer=e5_info.tokenizer,
        max_embed_tokens=e5_info.max_embed_tokens,
        fallback=SemanticBoundaries(topic_embed, percentile=90, window=0),
    )
    chunks = splitter.split_chunks(TEXT)
    assert {c.strategy for c in chunks} == {"semantic"}
    assert all(c.token_count <= 60 for c in chunks)
    assert any(c.start_index == TEXT.index(TAXES[0]) for c in chunks)
    assert not any("Cats" in c.text and "Taxes" in c.text for c in chunks)
    for c in chunks:
        assert TEXT[c.start_index : c.end_index] == c.text
    plain = HeadingFirstSplitter(60, 0, 0, tokenizer=e5_info.tokenizer).split_chunks(TEXT)
    assert any("Cats" in c.text and "Taxes" in c.text for c in plain)  # without it: mixed


def test_bad_fallback_is_refused(e5_info):
    with pytest.raises(ValueError, match="fallback"):
        HeadingFirstSplitter(60, tokenizer=e5_info.tokenizer, fallback=object())
