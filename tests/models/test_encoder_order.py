"""Bucketing and streams change no vector and no order: the encoder's batches by token length
(torch) and the ONNX encoder's parallel runs (each text alone) give every text the vector it
gets alone, in input order."""

from __future__ import annotations

import numpy as np
import pytest

from ragingest.models.encoder import ModelEncoder

# lengths far apart and out of order, a duplicate, Russian and English
TEXTS = [
    "коротко",
    "Для альбомов с красной наклейкой срок выдачи составляет три дня. " * 6,
    "The loan period for albums is fourteen days.",
    "коротко",
    "Читальный зал открыт с девяти до девяти, кроме воскресенья. " * 14,
    "два слова",
    "The loan period for albums is fourteen days. " * 3,
]


class _Recorder:
    """A deterministic stand-in model (the vector of a text depends on the text alone) that
    records the batches it is given."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def encode(self, sentences, prompt=None, **_):
        self.batches.append(list(sentences))
        return np.stack([_unit(prompt + s) for s in sentences])


def _unit(text: str) -> np.ndarray:
    rng = np.random.default_rng(list(text.encode()))
    row = rng.standard_normal(8).astype(np.float32)
    return row / np.linalg.norm(row)


def test_torch_batches_are_bucketed_by_length_and_vectors_come_back_in_input_order(
    monkeypatch, e5_info
):
    recorder = _Recorder()
    monkeypatch.setattr(ModelEncoder, "model", property(lambda self: recorder))
    encoder = ModelEncoder(backend="torch", batch_size=3, max_batch_tokens=1024)
    vectors = encoder.embed_documents(TEXTS)
    prompt = encoder.info.document_prompt
    assert np.array_equal(np.asarray(vectors), np.stack([_unit(prompt + t) for t in TEXTS]))
    rust = encoder.info.backend_tokenizer
    lengths = [[len(rust.encode(prompt + t).ids) for t in batch] for batch in recorder.batches]
    flat = [n for batch in lengths for n in batch]
    assert flat == sorted(flat, reverse=True)  # longest first: each batch pads least
    assert all(len(b) <= 3 and len(b) * b[0] <= 1024 for b in lengths)
    assert sorted(t for b in recorder.batches for t in b) == sorted(TEXTS)


def test_onnx_gets_the_whole_call_at_once_in_input_order(monkeypatch):
    recorder = _Recorder()
    monkeypatch.setattr(ModelEncoder, "model", property(lambda self: recorder))
    encoder = ModelEncoder(backend="onnx", batch_size=3)
    encoder.embed_documents(TEXTS)
    assert recorder.batches == [TEXTS]  # it runs each text alone, scheduling them itself


@pytest.mark.slow
def test_onnx_streams_give_each_text_its_own_vector_in_input_order(e5_info):
    from ragingest.models.onnx_backend import OnnxSentenceEncoder
    from ragingest.models.resolve import load_model_info, onnx_model_file

    info = load_model_info(None, "onnx")
    onnx_file = onnx_model_file(info)

    def encoder(streams: int) -> OnnxSentenceEncoder:
        return OnnxSentenceEncoder(info.path, onnx_file, info.max_seq_length, info, streams)

    one, two = encoder(1), encoder(2)
    alone = np.stack([one.encode(text, prompt="passage: ") for text in TEXTS])
    together = two.encode(TEXTS, prompt="passage: ")
    assert together.shape == (len(TEXTS), 384)
    assert np.array_equal(together, alone)  # each text alone: bit for bit, whatever ran beside
    assert np.array_equal(together[0], together[3])


@pytest.mark.slow
def test_torch_bucketed_vectors_equal_unbucketed_within_float_noise():
    encoder = ModelEncoder(backend="torch", batch_size=4)
    bucketed = np.asarray(encoder.embed_documents(TEXTS))
    alone = np.asarray([encoder.embed_documents([text])[0] for text in TEXTS])
    # padding is masked out: what is left is float noise of other matrix shapes
    assert np.abs(bucketed - alone).max() < 1e-5
