"""Size measures: count a text span in model tokens, characters or words.

Contract: ``Measure.index(text)`` looks at a document once and returns a ``SpanCounter``
whose ``count(start, end)`` is the size of ``text[start:end]`` without re-tokenizing. For
tokens this uses the fast tokenizer's offset mapping (a token belongs to the span that holds
its first character), so it can differ from tokenizing the substring by a token at the edges;
the offsets are read from each distinct word's tokens where ``word_tokens`` proves them equal.
``Measure.exact(texts)`` tokenizes; ``Measure.exact_spans`` and ``Measure.exact_embedded`` give
the same exact numbers for slices of an indexed document (final chunk sizes, model limits)
without tokenizing it again (``TokenStartsCounter.exact``), falling back to ``exact`` where they
cannot prove it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from ragingest.defaults import UNITS, Unit
from ragingest.splitters.counters import (
    SPACE_CANDIDATES,
    CharCounter,
    SpanCounter,
    StartsCounter,
    TokenStartsCounter,
    span_exact,
)
from ragingest.splitters.word_tokens import WordTokens, is_word_local

if TYPE_CHECKING:
    from tokenizers import Tokenizer

    from ragingest.models.tokenizer_view import ModelTokenizer

MIN_BUDGET = 8  # tokens: a section's text budget never drops below this, whatever its breadcrumb


def capped_size(size: int, unit: str, max_embed_tokens: int | None) -> int:
    """The chunk size a splitter uses for ``size``: in tokens never over the model's
    ``max_embed_tokens`` (a longer embedded text would be truncated), else ``size``."""
    if unit == "tokens" and max_embed_tokens:
        return min(size, max_embed_tokens)
    return size


def section_budget(chunk_size: int, max_embed_tokens: int, prefix_cost: int) -> int:
    """Tokens of text a chunk may hold when ``prefix_cost`` tokens of breadcrumb are embedded
    with it: ``chunk_size``, less what the model limit leaves, at least ``MIN_BUDGET``."""
    return max(MIN_BUDGET, min(chunk_size, max_embed_tokens - prefix_cost))

_WORD = re.compile(r"\S+")
# Tokenize long documents in blocks cut at newlines, so memory stays bounded.
_BLOCK_CHARS = 50_000
_GROUP_BLOCKS = 32  # blocks per tokenizer call (~1.6 MB)
# Control characters that Python calls whitespace and the tokenizer deletes join words across
# them: a document with one is counted by tokenizing its chunks.
_CONTROL = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f-\x84\x86-\x9f]")
_CACHE_LIMIT = 4096


class Measure:
    """How chunk sizes are counted. ``tokenizer`` is a Hugging Face fast tokenizer."""

    def __init__(self, unit: Unit = "tokens", tokenizer: ModelTokenizer | None = None) -> None:
        if unit not in UNITS:
            raise ValueError(f"unit must be one of {UNITS}, got {unit!r}")
        if unit == "tokens" and tokenizer is None:
            raise ValueError("unit='tokens' needs the embedding model's tokenizer")
        self.unit = unit
        self.tokenizer = tokenizer
        self._local: bool | None = None
        self._word_tokens: WordTokens | None = None
        self._costs: dict[str, int] = {}

    def index(self, text: str) -> SpanCounter:
        """A ``SpanCounter`` over ``text`` in this measure's unit."""
        if self.unit == "chars":
            return CharCounter()
        if self.unit == "words":
            return StartsCounter([m.start() for m in _WORD.finditer(text)])
        return self._token_counter(text)

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
        encoded = self._tokenizer()(list(texts), add_special_tokens=False)["input_ids"]
        return [len(ids) for ids in encoded]

    def cost(self, text: str) -> int:
        """``exact([text])[0]``, remembered (breadcrumbs and headers repeat)."""
        if text not in self._costs:
            if len(self._costs) >= _CACHE_LIMIT:
                self._costs.clear()
            self._costs[text] = self.exact([text])[0]
        return self._costs[text]

    def exact_spans(
        self, text: str, counter: SpanCounter, spans: Sequence[tuple[int, int]]
    ) -> list[int]:
        """``exact([text[s:e] for s, e in spans])`` from ``counter = self.index(text)``."""
        if self.unit == "chars":
            return [e - s for s, e in spans]
        sizes = [span_exact(counter, s, e) for s, e in spans]
        missing = [i for i, n in enumerate(sizes) if n is None]
        for i, n in zip(
            missing, self.exact([text[slice(*spans[i])] for i in missing]), strict=True
        ):
            sizes[i] = n
        return sizes  # type: ignore[return-value]

    def exact_embedded(
        self, text: str, counter: SpanCounter, embeds: Sequence[tuple[str, int, int]]
    ) -> list[int]:
        """Exact size of each ``embed`` in ``(embed, start, end)``, where ``embed`` is a lead
        (breadcrumb, header; may be empty) + one separator + ``text[start:end]`` (else, its
        words only: ``splitters.dialects``, it is tokenized whole)."""
        sizes: list[int | None] = []
        for embed, s, e in embeds:
            lead = embed[: len(embed) - (e - s)]
            n = span_exact(counter, s, e) if self.unit == "tokens" else None
            if n is not None and not embed.endswith(text[s:e]):  # markup out: count it all
                n = None
            if n is not None and lead:
                ok = len(lead) > 1 and lead[-1] in SPACE_CANDIDATES and not lead[-2].isspace()
                n = self.cost(lead[:-1]) + n if ok and self._word_local() else None
            sizes.append(n)
        missing = [i for i, n in enumerate(sizes) if n is None]
        for i, n in zip(missing, self.exact([embeds[i][0] for i in missing]), strict=True):
            sizes[i] = n
        return sizes  # type: ignore[return-value]

    def _token_counter(self, text: str) -> TokenStartsCounter:
        # lists, not arrays: bisect on an array boxes every probe (10× slower packing)
        starts: list[int] = []
        words: list[int] = []  # starts without the stray tokens of blocks' trailing whitespace
        block_starts: list[int] = []
        local = self._word_local() and not _CONTROL.search(text)
        blocks = _blocks(text)
        for (block_start, block), block_tokens in zip(
            blocks, self._block_starts(blocks, local), strict=True
        ):
            first = len(starts)
            starts.extend(block_tokens)
            if not local:
                continue
            stop = len(starts)
            body_end = block_start + len(block.rstrip())
            while stop > first and starts[stop - 1] >= body_end:
                stop -= 1
            words.extend(starts[first:stop])
            if block_start:
                block_starts.append(block_start)
        specials = self._words().specials if local else ()
        return TokenStartsCounter(text, starts, words if local else None, block_starts, specials)

    def _block_starts(self, blocks: list[tuple[int, str]], local: bool) -> Iterator[list[int]]:
        """Each block's token start offsets in the document, a group of blocks at a time (only
        one group's are held at once): from distinct words where ``WordTokens`` proves them
        exact, else from the tokenizer's offsets (the Rust side runs a group in parallel)."""
        backend = self._backend()
        for i in range(0, len(blocks), _GROUP_BLOCKS):
            group = blocks[i : i + _GROUP_BLOCKS]
            known = self._words().block_starts(group) if local else [None] * len(group)
            missing = [block for block, starts in zip(group, known, strict=True) if starts is None]
            if not missing:
                offsets = []
            elif backend is not None:
                encodings = backend.encode_batch([b for _, b in missing], add_special_tokens=False)
                offsets = [e.offsets for e in encodings]
            else:
                offsets = [
                    self._tokenizer()(b, add_special_tokens=False, return_offsets_mapping=True)[
                        "offset_mapping"
                    ]
                    for _, b in missing
                ]
            encoded = iter(zip(missing, offsets, strict=True))
            for starts in known:
                if starts is None:
                    (start, _), block_offsets = next(encoded)
                    starts = [start + s for s, _ in block_offsets]
                yield starts

    def _tokenizer(self) -> ModelTokenizer:
        """The model's tokenizer: a count in tokens has one (``__init__`` refuses it without)."""
        assert self.tokenizer is not None
        return self.tokenizer

    def _word_local(self) -> bool:
        """Whether the tokenizer is word-local (``word_tokens.is_word_local``): then a
        whitespace-bounded slice tokenizes exactly as the same words inside the document."""
        if self._local is None:
            self._local = self.unit == "tokens" and is_word_local(self._backend())
        return self._local

    def _words(self) -> WordTokens:
        if self._word_tokens is None:
            backend = self._backend()
            assert backend is not None  # word-local: is_word_local saw this backend
            self._word_tokens = WordTokens(backend)
        return self._word_tokens

    def _backend(self) -> Tokenizer | None:
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
