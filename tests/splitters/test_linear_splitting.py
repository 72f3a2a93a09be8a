"""Splitting tokenizes a document once: a budget on the characters handed to the tokenizer
(the bound on work that keeps big tables and code fences linear; bench/linear.py times it),
and the sizes read from the document's index equal tokenizing each chunk on its own."""

from __future__ import annotations

import random
from typing import Any

import pytest

from ragingest.splitters import HeadingFirstSplitter
from ragingest.splitters.counters import TokenStartsCounter
from ragingest.splitters.measure import Measure


class _CountingBackend:
    """The Rust tokenizer, counting the characters it is asked to tokenize."""

    def __init__(self, real: Any, log: list[int]) -> None:
        self._real, self._log = real, log

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def encode(self, text: str, *args: Any, **kwargs: Any) -> Any:
        self._log.append(len(text))
        return self._real.encode(text, *args, **kwargs)

    def encode_batch(self, texts: list[str], *args: Any, **kwargs: Any) -> Any:
        self._log.append(sum(map(len, texts)))
        return self._real.encode_batch(texts, *args, **kwargs)

    def encode_batch_fast(self, texts: list[str], *args: Any, **kwargs: Any) -> Any:
        self._log.append(sum(map(len, texts)))
        return self._real.encode_batch_fast(texts, *args, **kwargs)


class _CountingTokenizer:
    def __init__(self, real: Any) -> None:
        self.log: list[int] = []
        self.backend_tokenizer = _CountingBackend(real.backend_tokenizer, self.log)
        self.split_special_tokens = getattr(real, "split_special_tokens", False)
        self._real = real

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the transformers wrapper is not needed for this tokenizer")


def _table(rows: int) -> str:
    body = "".join(f"| {i} | item {i} of the list | {i * 3 % 97}.50 |\n" for i in range(rows))
    return "# Prices\n\nIntro.\n\n| id | name | price |\n|---|---|---|\n" + body + "\nAfter.\n"


def _fence(lines: int) -> str:
    body = "".join(f"value_{i} = compute({i}, 'step {i % 7}')\n" for i in range(lines))
    return "# Listing\n\nIntro.\n\n```python\n" + body + "```\n"


@pytest.mark.parametrize("text", [_table(2_000), _fence(5_000)], ids=["table", "fence"])
def test_a_document_is_tokenized_once(e5_info, text):
    tokenizer = _CountingTokenizer(e5_info.tokenizer)
    splitter = HeadingFirstSplitter(tokenizer=tokenizer, max_embed_tokens=512)
    splitter.split_chunks("# Warm\n\n## Up\n\nText.")  # the first split probes the tokenizer once
    tokenizer.log.clear()
    chunks = splitter.split_chunks(text)
    # over the model's limit, so re-cut by rows/lines into many pieces
    assert len(chunks) > 40
    assert all(text[c.start_index : c.end_index] == c.text for c in chunks)
    # the document once, plus its breadcrumbs and table header (a few dozen characters):
    # re-tokenizing it for every re-cut piece handed the tokenizer 40-300× its length
    assert sum(tokenizer.log) < len(text) + 200, tokenizer.log
    assert len(tokenizer.log) <= 8, tokenizer.log
    real = Measure("tokens", e5_info.tokenizer)
    assert [c.token_count for c in chunks] == real.exact([c.text for c in chunks])
    assert max(real.exact([c.embed_text for c in chunks])) <= 512


def _spans(text: str, rng: random.Random, count: int = 400) -> list[tuple[int, int]]:
    """Random slices that start after whitespace and end before it."""
    starts = [i for i in range(1, len(text)) if text[i - 1].isspace() and not text[i].isspace()]
    spans = []
    for _ in range(count):
        a = rng.choice(starts)
        b = min(len(text), a + rng.randint(1, 4_000))
        while b < len(text) and not text[b].isspace():
            b += 1
        while text[b - 1].isspace():
            b -= 1
        spans.append((a, b))
    return spans


WORDS = "Правило исключение «цитата» т. е. 2024 e.g. <unk> x_1 (скобки) Щука | — … ｱ".split()


def test_span_counts_equal_tokenizing_the_slice(e5_info):
    """Whitespace-bounded slices of a mixed document (Russian, CRLF, tabs, no-break spaces,
    an added token, blocks of 50 000 characters) count exactly as tokenized alone."""
    rng = random.Random(14)
    seps = [" ", " ", " ", "\n", "\n\n", "\t", "\r\n", "  ", "\u00a0", " \n "]
    text = "".join(rng.choice(WORDS) + rng.choice(seps) for _ in range(40_000))
    measure = Measure("tokens", e5_info.tokenizer)
    counter = measure.index(text)
    assert isinstance(counter, TokenStartsCounter)
    spans = _spans(text, rng)
    counted = [counter.exact(a, b) for a, b in spans]
    truth = measure.exact([text[a:b] for a, b in spans])
    proven = [(c, t) for c, t in zip(counted, truth, strict=True) if c is not None]
    assert len(proven) > 150  # edges next to <unk> or a no-break space are not proven
    assert [c for c, _ in proven] == [t for _, t in proven]
    assert measure.exact_spans(text, counter, spans) == truth
    embeds = [(f"Doc > Раздел\n{text[a:b]}", a, b) for a, b in spans[:50]]
    assert measure.exact_embedded(text, counter, embeds) == measure.exact([e for e, *_ in embeds])


@pytest.mark.parametrize("odd", ["\x85", "\u2028", "\u2009", "\u200b", "\xad"])
def test_rare_spaces_near_an_edge_are_tokenized(e5_info, odd):
    """Rare spaces: spans with one next to an edge are not proven, the rest are."""
    rng = random.Random(15)
    seps = [" "] * 12 + ["\n"] * 4 + [odd]
    text = "".join(rng.choice(WORDS) + rng.choice(seps) for _ in range(8_000))
    measure = Measure("tokens", e5_info.tokenizer)
    counter = measure.index(text)
    spans = _spans(text, rng, 150)
    counted = [counter.exact(a, b) for a, b in spans]
    truth = measure.exact([text[a:b] for a, b in spans])
    proven = [(c, t) for c, t in zip(counted, truth, strict=True) if c is not None]
    assert len(proven) > 50
    assert [c for c, _ in proven] == [t for _, t in proven]
    assert measure.exact_spans(text, counter, spans) == truth


@pytest.mark.parametrize("control", ["\x0b", "\x1c"])
def test_control_characters_fall_back_to_tokenizing(e5_info, control):
    """Control characters the tokenizer deletes join words across what Python calls
    whitespace: such a document proves nothing; its sizes come from tokenizing the slices."""
    rng = random.Random(15)
    seps = [" "] * 12 + ["\n"] * 4 + [control]
    text = "".join(rng.choice(WORDS) + rng.choice(seps) for _ in range(8_000))
    measure = Measure("tokens", e5_info.tokenizer)
    counter = measure.index(text)
    spans = _spans(text, rng, 100)
    assert {counter.exact(a, b) for a, b in spans} == {None}
    truth = measure.exact([text[a:b] for a, b in spans])
    assert measure.exact_spans(text, counter, spans) == truth
