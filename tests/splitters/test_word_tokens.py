"""Token starts read from distinct words (``WordTokens``) are exactly the tokenizer's own
offsets, on strings chosen to break word-locality, under any cut into blocks; what cannot be
proven is left to the tokenizer; a word seen before is not tokenized again."""

from __future__ import annotations

import random
from typing import Any

import pytest

from ragingest.splitters.counters import TokenStartsCounter
from ragingest.splitters.measure import Measure
from ragingest.splitters.word_tokens import WordTokens, is_word_local, separators

TRICKY = [
    "",
    " ",
    "\n\n",
    "a",
    "a ",
    " a",
    "a \n\t b  c\n",
    "Цена\u00a0100\u00a0₽ 😀 中文 x",  # no-break space, currency, emoji, CJK
    "\ufeff# Title\n\nword x\u200b y \u200b z",  # BOM, zero-width spaces (deleted)
    "x" * 30 + " 3.14159 2024-12-01 end",  # a long word, digits
    "Ｆｕｌｌ ｗｉｄｔｈ ﬁne ﬂow x¨y ´z",  # compatibility forms that normalize to spaces
    "a\u2028b\u2029c\u3000d\u2009e\u202ff g",  # rare Unicode spaces
    "\u0301a b \u0301c d",  # a combining mark at a word start
    "a▁b ▁c d▁ e",  # the Metaspace marker itself
    "tabs\tand\r\nCRLF\r\n lines\n\n\n",
    "one two three\ufeff",  # a last word that normalizes to end in a space
    "w \u200b",  # a last word that normalizes to nothing
    "nul\x00inside a word, \x00 \x07 alone\x7f x",  # control characters (deleted)
    "👍🏽 👨‍👩‍👧 🇷🇺 done",  # modifiers, joiners, flags
    "Правило: срок — 14 дней (т. е. две недели); «исключение» №5.",
]
EXACT = {  # (text, token starts): tokens may start on the whitespace before their word
    "a \n\t b  c\n": [0, 4, 7, 9],
    "Цена\u00a0100\u00a0₽ 😀 中文 x": [0, 4, 8, 9, 10, 12, 13, 15],
    "\ufeff# Title\n\nword x\u200b y \u200b z": [0, 2, 9, 14, 17, 21],
}


def _truth(backend: Any, blocks: list[tuple[int, str]]) -> list[list[int]]:
    encodings = backend.encode_batch([b for _, b in blocks], add_special_tokens=False)
    return [
        [start + s for s, _ in e.offsets] for (start, _), e in zip(blocks, encodings, strict=True)
    ]


def _cut(text: str, size: int) -> list[tuple[int, str]]:
    """Blocks of ``size`` characters, cut anywhere (inside words too)."""
    return [(i, text[i : i + size]) for i in range(0, len(text), size)]


@pytest.fixture(scope="module")
def backend(e5_info):
    return e5_info.backend_tokenizer


def test_the_tokenizer_is_word_local_and_its_separators_are_known(backend):
    assert is_word_local(backend)
    found = separators(backend)
    assert {" ", "\n", "\t", "\r", "\f", "\xa0", "\u2028", "\u3000", "\u2009"} <= found
    # deleted (they join words) or kept as a letter: never counted as separators
    assert not {"\x0b", "\x1c", "\x1f", "\x85"} & found


def test_exact_starts_of_tricky_strings(backend):
    words = WordTokens(backend)
    for text, starts in EXACT.items():
        assert words.block_starts([(0, text)]) == [starts]
        assert _truth(backend, [(0, text)]) == [starts]


@pytest.mark.parametrize("size", [None, 1, 2, 5, 13])
def test_tricky_strings_equal_the_tokenizer_in_any_blocks(backend, size):
    words = WordTokens(backend)
    for text in TRICKY:
        blocks = _cut(text, size) if size else [(0, text)]
        assert words.block_starts(blocks) == _truth(backend, blocks), repr(text)


def test_random_mixtures_equal_the_tokenizer(backend):
    rng = random.Random(14)
    parts = [*"ab Щ\n\t.,()中😀\ufeff\u200b\xa0\u3000\u0301▁¨ﬁ1\x00", "  ", "\n\n", "xyz" * 9]
    words = WordTokens(backend)
    for _ in range(600):
        text = "".join(rng.choice(parts) for _ in range(rng.randint(1, 60)))
        blocks = _cut(text, rng.randint(3, 40))
        assert words.block_starts(blocks) == _truth(backend, blocks), repr(text)


@pytest.mark.parametrize("odd", ["<unk>", "<mask>", "</s>", "\x85", "\x1c"])
def test_what_cannot_be_proven_is_left_to_the_tokenizer(e5_info, backend, odd):
    """An added token (matched before normalization, it splits words) or whitespace the
    normalizer does not turn into a space: that block is ``None``, the others are read."""
    text = f"first block here\nsecond {odd} block\n"
    blocks = [(0, text[:17]), (17, text[17:])]
    got = WordTokens(backend).block_starts(blocks)
    assert got[0] == _truth(backend, blocks)[0] == [0, 5, 11, 16]  # 16: its last newline
    assert got[1] is None
    counter = Measure("tokens", e5_info.tokenizer).index(text)
    assert isinstance(counter, TokenStartsCounter)
    assert counter.starts == _truth(backend, [(0, text)])[0]


class _Counting:
    """The Rust tokenizer, logging the characters it is asked to tokenize."""

    def __init__(self, real: Any) -> None:
        self._real, self.log = real, []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def encode_batch(self, texts: list[str], *args: Any, **kwargs: Any) -> Any:
        self.log.append(sum(map(len, texts)))
        return self._real.encode_batch(texts, *args, **kwargs)


def test_each_distinct_word_is_tokenized_once(backend):
    text = "\n".join(f"Line {i % 7}: the same few words again." for i in range(2_000))
    counting = _Counting(backend)
    words = WordTokens(counting)
    first = words.block_starts([(0, text)])
    # the distinct segments (a few hundred characters) and the block's edges, not the text
    assert sum(counting.log) < 400 < len(text)
    counting.log.clear()
    assert words.block_starts([(0, text)]) == first == _truth(backend, [(0, text)])
    assert sum(counting.log) < 40  # only the first word and the last segment


def test_measure_index_reads_the_same_offsets(e5_info, backend):
    rng = random.Random(15)
    vocabulary = [*"Правило исключение 2024 e.g. x_1 (скобки) ｱ 😀".split(), "\ufeffBOM"]
    seps = [" ", " ", "\n", "\n\n", "\t", "\r\n", "\u00a0", " \n "]
    text = "".join(rng.choice(vocabulary) + rng.choice(seps) for _ in range(4_000))
    assert len(text) < 50_000  # one block
    counter = Measure("tokens", e5_info.tokenizer).index(text)
    assert isinstance(counter, TokenStartsCounter)
    assert counter.starts == _truth(backend, [(0, text)])[0]
    assert counter.count(0, len(text)) == len(backend.encode(text, add_special_tokens=False).ids)
