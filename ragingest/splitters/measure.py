"""Size measures: count a text span in model tokens, characters or words.

Contract: ``Measure.index(text)`` looks at a document once and returns a ``SpanCounter``
whose ``count(start, end)`` is the size of ``text[start:end]`` without re-tokenizing. For
tokens this uses the fast tokenizer's offset mapping (a token belongs to the span that holds
its first character), so it can differ from tokenizing the substring by a token at the edges;
``Measure.exact(texts)`` gives exact counts where they matter (final chunk sizes, model limits).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from typing import Any, Literal, Protocol

Unit = Literal["tokens", "chars", "words"]
UNITS: tuple[Unit, ...] = ("tokens", "chars", "words")

_WORD = re.compile(r"\S+")
# Tokenize long documents in blocks cut at newlines, so memory stays bounded.
_BLOCK_CHARS = 50_000


class SpanCounter(Protocol):
    def count(self, start: int, end: int) -> int: ...

    def boundaries(self, start: int, end: int) -> list[int]:
        """Start offsets of the units (tokens/words/chars) inside ``[start, end)``."""
        ...


class _CharCounter:
    def count(self, start: int, end: int) -> int:
        return max(0, end - start)

    def boundaries(self, start: int, end: int) -> list[int]:
        return list(range(start, end))


class _StartsCounter:
    """Counts units whose start offset falls inside the span."""

    def __init__(self, starts: list[int]) -> None:
        self.starts = starts

    def count(self, start: int, end: int) -> int:
        return bisect.bisect_left(self.starts, end) - bisect.bisect_left(self.starts, start)

    def boundaries(self, start: int, end: int) -> list[int]:
        lo = bisect.bisect_left(self.starts, start)
        hi = bisect.bisect_left(self.starts, end)
        return sorted(set(self.starts[lo:hi]))


class Measure:
    """How chunk sizes are counted. ``tokenizer`` is a Hugging Face fast tokenizer."""

    def __init__(self, unit: Unit = "tokens", tokenizer: Any = None) -> None:
        if unit not in UNITS:
            raise ValueError(f"unit must be one of {UNITS}, got {unit!r}")
        if unit == "tokens" and tokenizer is None:
            raise ValueError("unit='tokens' needs the embedding model's tokenizer")
        self.unit = unit
        self.tokenizer = tokenizer

    def index(self, text: str) -> SpanCounter:
        if self.unit == "chars":
            return _CharCounter()
        if self.unit == "words":
            return _StartsCounter([m.start() for m in _WORD.finditer(text)])
        return _StartsCounter(self._token_starts(text))

    def exact(self, texts: Sequence[str]) -> list[int]:
        """Exact size of each text (tokens without special tokens)."""
        if self.unit == "chars":
            return [len(t) for t in texts]
        if self.unit == "words":
            return [len(t.split()) for t in texts]
        if not texts:
            return []
        backend = self._backend()
        if backend is not None:  # same ids, without offsets or the wrapper's conversions
            encodings = backend.encode_batch_fast(list(texts), add_special_tokens=False)
            return [len(e.ids) for e in encodings]
        encoded = self.tokenizer(list(texts), add_special_tokens=False)["input_ids"]
        return [len(ids) for ids in encoded]

    def _token_starts(self, text: str) -> list[int]:
        starts: list[int] = []
        blocks = _blocks(text)
        backend = self._backend()
        if backend is not None:  # all blocks in one call: the Rust side runs them in parallel
            encodings = backend.encode_batch([b for _, b in blocks], add_special_tokens=False)
            for (block_start, _), enc in zip(blocks, encodings, strict=True):
                starts.extend(block_start + start for start, _ in enc.offsets)
            return starts
        for block_start, block in blocks:
            enc = self.tokenizer(block, add_special_tokens=False, return_offsets_mapping=True)
            starts.extend(block_start + start for start, _ in enc["offset_mapping"])
        return starts

    def _backend(self) -> Any:
        """The fast tokenizer's Rust ``Tokenizer`` when calling it directly gives exactly what
        the ``transformers`` wrapper gives here, else ``None``. The model shares this tokenizer
        and its batches leave truncation and padding set on the Rust side; they are cleared
        here, as the wrapper itself does on its next call without them."""
        backend = getattr(self.tokenizer, "backend_tokenizer", None)
        if backend is None or not hasattr(backend, "encode_batch_fast"):
            return None
        if backend.truncation is not None:
            backend.no_truncation()
        if backend.padding is not None:
            backend.no_padding()
        if backend.encode_special_tokens != bool(
            getattr(self.tokenizer, "split_special_tokens", False)
        ):
            return None
        return backend


def _blocks(text: str) -> list[tuple[int, str]]:
    """Cut text into blocks of about ``_BLOCK_CHARS`` at newlines (or anywhere, if none)."""
    if len(text) <= _BLOCK_CHARS:
        return [(0, text)]
    blocks: list[tuple[int, str]] = []
    pos = 0
    while pos < len(text):
        end = min(len(text), pos + _BLOCK_CHARS)
        if end < len(text):
            cut = text.rfind("\n", pos + 1, end)
            if cut == -1:
                cut = text.rfind(" ", pos + 1, end)
            end = cut + 1 if cut != -1 else end
        blocks.append((pos, text[pos:end]))
        pos = end
    return blocks
