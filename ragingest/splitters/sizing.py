"""The sizes a heading-first splitter packs by, resolved once from its arguments.

Contract: ``resolve_sizing`` takes the size arguments as a LangChain user spells them and
returns a ``Sizing`` whose ``chunk_size`` never passes the model's ``max_embed_tokens`` in
model tokens (a longer embedded text would be truncated; a warning says so), whose overlap is
``default_overlap(chunk_size)`` unless given, and which loads the model's tokenizer only where
sizes are counted in tokens or by a length function (the model's limit is then kept in model
tokens). ``ValueError`` for an overlap outside ``[0, chunk_size)`` or a negative minimum.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ragingest.defaults import CHUNK_SIZE, default_overlap
from ragingest.splitters.measure import Unit, capped_size

if TYPE_CHECKING:
    from ragingest.models.tokenizer_view import ModelTokenizer

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Sizing:
    """What ``resolve_sizing`` settled (module docstring)."""

    chunk_size: int
    chunk_overlap: int
    unit: Unit
    tokenizer: ModelTokenizer | None
    max_embed_tokens: int | None
    length_function: Callable[[str], int] | None
    sized_by_function: bool  # sizes are a length function's, not model tokens


def resolve_sizing(
    chunk_size: int | None,
    chunk_overlap: int | None,
    min_chunk_size: int,
    *,
    unit: Unit,
    tokenizer: ModelTokenizer | None,
    model: str | None,
    max_embed_tokens: int | None,
    length_function: Callable[[str], int] | None,
) -> Sizing:
    """The sizes of a splitter built with these arguments (module docstring)."""
    sized_by_function = length_function is not None
    if length_function is len:  # the same sizes, counted without a call per word
        unit, length_function = "chars", None
    if (unit == "tokens" or sized_by_function) and tokenizer is None:
        from ragingest.models.resolve import load_model_info

        info = load_model_info(model)
        tokenizer = info.splitter_tokenizer
        max_embed_tokens = max_embed_tokens or info.max_embed_tokens
    # a length function's sizes are not model tokens: they are not capped (the limit is kept
    # by ``EmbeddedText.fit``, in model tokens)
    size_unit = "function" if sized_by_function else unit
    size = capped_size(chunk_size or CHUNK_SIZE, size_unit, max_embed_tokens)
    if chunk_size is not None and size < chunk_size:
        log.warning(
            "chunk_size %d is over the model's limit; capped at %d tokens so no embedded "
            "text is truncated",
            chunk_size,
            size,
        )
    overlap = default_overlap(size) if chunk_overlap is None else chunk_overlap
    if not 0 <= overlap < size:
        raise ValueError(f"need 0 <= chunk_overlap < chunk_size, got {overlap} and {size}")
    if min_chunk_size < 0:
        raise ValueError("min_chunk_size must be >= 0")
    return Sizing(
        size, overlap, unit, tokenizer, max_embed_tokens, length_function, sized_by_function
    )
