"""``splitters.sizing.resolve_sizing``: the sizes a splitter packs by, capped at the model."""

from __future__ import annotations

import logging

import pytest

from ragingest.defaults import default_overlap
from ragingest.models.resolve import load_model_info
from ragingest.splitters.sizing import resolve_sizing


def _resolve(chunk_size: int | None, overlap: int | None = None, minimum: int = 0, **kw):
    args = {
        "unit": "tokens",
        "tokenizer": None,
        "model": None,
        "max_embed_tokens": None,
        "length_function": None,
        **kw,
    }
    return resolve_sizing(chunk_size, overlap, minimum, **args)


def test_a_size_over_the_models_limit_is_capped_with_a_warning(caplog) -> None:
    limit = load_model_info(None).max_embed_tokens
    with caplog.at_level(logging.WARNING, logger="ragingest.splitters.sizing"):
        sizing = _resolve(limit + 100)
    assert (sizing.chunk_size, sizing.max_embed_tokens) == (limit, limit)
    assert sizing.chunk_overlap == default_overlap(limit)
    assert f"chunk_size {limit + 100} is over the model's limit; capped at {limit}" in caplog.text


def test_characters_are_not_capped_and_len_counts_as_characters() -> None:
    chars = _resolve(5000, 0, unit="chars")
    assert (chars.chunk_size, chars.unit, chars.tokenizer) == (5000, "chars", None)
    by_len = _resolve(5000, 0, length_function=len)
    assert (by_len.unit, by_len.length_function, by_len.sized_by_function) == ("chars", None, True)
    assert by_len.chunk_size == 5000  # a length function's sizes are not model tokens


@pytest.mark.parametrize(("overlap", "minimum"), [(-1, 0), (300, 0), (0, -1)])
def test_bad_overlap_or_minimum_is_refused(overlap: int, minimum: int) -> None:
    with pytest.raises(ValueError):
        _resolve(300, overlap, minimum, unit="chars")
