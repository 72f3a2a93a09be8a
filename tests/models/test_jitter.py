"""The ``RAGINGEST_TEST_JITTER`` test wrapper (``tests/jitter.py``), over a stand-in model (no
real model here)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ragingest.models import onnx_backend, resolve
from tests.jitter import JITTER_ENV, JitteredModel, install, jitter_threads, with_test_jitter
from tests.margins import COSINE_MARGIN, CPU_DRIFT, assert_best_by_margin, required_margin

DIMENSIONS = 384


class UnitRows:
    """A stand-in model: ``encode`` gives one fixed unit vector per text (seeded by its index
    in ``TEXTS``), as ``SentenceTransformer.encode`` would with ``normalize_embeddings``."""

    max_seq_length = 512

    def __init__(self, texts: list[str]) -> None:
        rows = np.random.default_rng(7).standard_normal((len(texts), DIMENSIONS))
        unit = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)
        self.rows = dict(zip(texts, unit, strict=True))

    def encode(self, sentences, prompt=None, **_):
        texts = [sentences] if isinstance(sentences, str) else sentences
        out = np.stack([self.rows[t] for t in texts])
        return out[0] if isinstance(sentences, str) else out


TEXTS = [f"text {i}" for i in range(200)]


def test_unset_costs_nothing(monkeypatch):
    monkeypatch.delenv(JITTER_ENV, raising=False)
    model = UnitRows(TEXTS)
    assert with_test_jitter(model) is model
    assert (jitter_threads(0), jitter_threads(3)) == (0, 3)


def test_set_moves_every_score_by_about_the_size_the_same_way_for_the_same_text(monkeypatch):
    monkeypatch.setenv(JITTER_ENV, "1e-3")
    model = UnitRows(TEXTS)
    jittered = with_test_jitter(model)
    assert jittered is not model and jittered.max_seq_length == 512  # the model's own
    moved = jittered.encode(TEXTS, normalize_embeddings=True)
    assert np.array_equal(moved, jittered.encode(TEXTS))  # one text, one vector
    assert np.array_equal(moved[3], jittered.encode(TEXTS[3]))  # alone or in a batch
    assert np.allclose(np.linalg.norm(moved, axis=1), 1.0, atol=1e-6)
    base = model.encode(TEXTS)
    shifts = (moved[:100] * moved[100:]).sum(axis=1) - (base[:100] * base[100:]).sum(axis=1)
    # every score q·d moves by about size × √2 (both vectors carry noise): 1.4e-3 here
    assert 0.7e-3 < float(np.std(shifts)) < 2.8e-3
    prompted = jittered.encode(TEXTS[:1], prompt="query: ")
    assert not np.array_equal(prompted[0], moved[0])  # the prompt is part of the seed


def test_set_runs_onnx_runtime_on_another_thread_count(monkeypatch):
    monkeypatch.setenv(JITTER_ENV, "1e-3")
    assert jitter_threads(1) == 2
    assert jitter_threads(4) == 1


@pytest.mark.parametrize("value", ["0", "1.5", "-1"])
def test_a_size_outside_zero_to_one_is_refused(monkeypatch, value):
    monkeypatch.setenv(JITTER_ENV, value)
    with pytest.raises(ValueError, match="RAGINGEST_TEST_JITTER must be a relative size"):
        with_test_jitter(UnitRows(TEXTS))


def test_a_negative_size_turns_each_texts_noise_the_other_way(monkeypatch):
    rows = UnitRows(TEXTS).encode(TEXTS)
    monkeypatch.setenv(JITTER_ENV, "1e-3")
    up = with_test_jitter(UnitRows(TEXTS)).encode(TEXTS)
    monkeypatch.setenv(JITTER_ENV, "-1e-3")
    down = with_test_jitter(UnitRows(TEXTS)).encode(TEXTS)
    # the same noise, opposite sign (both renormalized): the moves cancel to first order
    assert np.abs((up - rows) + (down - rows)).max() < 1e-4 < 1e-3 < np.abs(up - rows).max()


def test_install_wraps_the_model_the_product_loads_and_its_onnx_threads(monkeypatch):
    monkeypatch.setenv(JITTER_ENV, "1e-3")
    monkeypatch.setattr(resolve, "_load_model", lambda name, backend: UnitRows(TEXTS))
    monkeypatch.setattr(onnx_backend, "intra_op_threads", lambda: 1)
    install(monkeypatch.setattr)
    loaded = resolve._load_sentence_transformer.__wrapped__("any", "onnx")  # uncached
    assert isinstance(loaded, JitteredModel) and isinstance(loaded.inner, UnitRows)
    assert onnx_backend.intra_op_threads() == 2


def test_the_product_imports_no_test_hook():
    import ragingest.models.onnx_backend
    import ragingest.models.resolve

    for module in (ragingest.models.onnx_backend, ragingest.models.resolve):
        assert "jitter" not in Path(str(module.__file__)).read_text(encoding="utf-8").lower()


def test_margins_ask_for_another_cpus_drift_under_the_jitter(monkeypatch):
    monkeypatch.delenv(JITTER_ENV, raising=False)
    assert required_margin() == COSINE_MARGIN
    assert_best_by_margin([0.9, 0.885], 0)  # 0.015: holds here...
    monkeypatch.setenv(JITTER_ENV, "1e-2")
    assert required_margin() == COSINE_MARGIN + CPU_DRIFT == 0.02
    with pytest.raises(AssertionError):  # ...but not with a drift's headroom
        assert_best_by_margin([0.9, 0.885], 0)
