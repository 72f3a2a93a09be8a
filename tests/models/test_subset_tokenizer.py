"""The subset tokenizer a query uses gives exactly the full tokenizer's model inputs."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from tokenizers import Tokenizer

from ragingest.models.subset_tokenizer import DICT_AFTER, SubsetTokenizer
from tests.conftest import EXAMPLES


@pytest.fixture(scope="module")
def tokenizers(e5_info, tmp_path_factory):
    path = Path(e5_info.path) / "tokenizer.json"
    subset = SubsetTokenizer.load(path, tmp_path_factory.mktemp("cache"))
    assert subset is not None
    full = Tokenizer.from_file(str(path))
    return subset, full


def _full_inputs(full: Tokenizer, text: str, limit: int) -> tuple[list[int], list[int]]:
    encoding = full.encode(text, add_special_tokens=False)
    encoding.truncate(limit - full.num_special_tokens_to_add(False))
    encoding = full.post_process(encoding, add_special_tokens=True)
    return encoding.ids, encoding.type_ids


def _texts() -> list[str]:
    lines = []
    for path in sorted(EXAMPLES.glob("*.md")):
        lines += [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    rng = random.Random(12)
    alphabet = "абвгдеёжзийАБВ xyzXYZ019.,;!?-–«»<>/\\é\u0301\u200b\t\n🙂中文ـ"
    noise = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 60))) for _ in range(200)]
    specials = ["<s> a </s>", "<mask>x", " <mask> ", "<unk>", "", "   ", "query: " + "дней " * 700]
    return lines + noise + specials


@pytest.mark.slow
def test_model_inputs_equal_the_full_tokenizers(tokenizers):
    subset, full = tokenizers
    texts = _texts()
    assert len(texts) > 250
    for text in texts:
        for limit in (512, 16):
            assert subset.model_inputs(text, limit) == _full_inputs(full, text, limit), text


def test_counts_and_specials_equal_the_full_tokenizers(tokenizers, e5_info):
    subset, full = tokenizers
    assert subset.special_tokens == 2 == e5_info.special_tokens
    assert subset.count("passage: ") == len(full.encode("passage: ", add_special_tokens=False).ids)
    assert e5_info.max_embed_tokens == 507


def test_a_model_without_a_unigram_tokenizer_gets_none(tmp_path):
    from ragingest.models.locate import MINILM, resolve_model_path

    folder = Path(resolve_model_path(MINILM))
    assert SubsetTokenizer.load(folder / "tokenizer.json", tmp_path) is None


def test_a_piece_found_by_bisection_is_the_dicts(e5_info, tmp_path):
    # a query's few lookups bisect the sorted cache; after DICT_AFTER the dict answers: the same
    path = Path(e5_info.path) / "tokenizer.json"
    subset = SubsetTokenizer.load(path, tmp_path)
    assert subset is not None
    names = subset.pieces.joined.split("\0")
    rng = random.Random(3)
    probes = [*rng.sample(names, 3000), "", "\u0301", "несуществующеесловоxyz", names[-1]]
    by_bisection = [subset.piece_id(probe) for probe in probes]
    assert subset._ids is None  # still no dict: a query's cold path
    subset._lookups = DICT_AFTER
    by_dict = [subset.piece_id(probe) for probe in probes]
    assert subset._ids is not None
    expected = {name: i for i, name in enumerate(names)}
    assert by_bisection == by_dict == [expected.get(probe) for probe in probes]
    assert None in by_bisection and subset.pieces.piece(subset.unk_id) == names[subset.unk_id]
