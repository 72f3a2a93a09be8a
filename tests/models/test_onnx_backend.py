"""The ONNX Runtime (int8) backend, the default: selection, identity, vectors close to torch's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ragingest.models import locate as models
from ragingest.models import onnx_export
from ragingest.models.onnx_backend import omp_threads, pooling_config

pytestmark = pytest.mark.slow


def test_backend_name_from_argument_then_environment(monkeypatch):
    monkeypatch.delenv("RAGINGEST_BACKEND", raising=False)
    assert models.backend_name() == "onnx"
    monkeypatch.setenv("RAGINGEST_BACKEND", "TORCH")
    assert models.backend_name() == "torch"
    assert models.backend_name("onnx") == "onnx"
    with pytest.raises(ValueError, match="backend must be one of"):
        models.backend_name("tensorrt")


def test_onnx_vectors_are_another_model_for_collections(e5_info, monkeypatch):
    monkeypatch.delenv("RAGINGEST_BACKEND", raising=False)
    folder = Path(e5_info.path)
    torch_print = models.model_fingerprint(e5_info.name, folder, "torch")
    assert e5_info.fingerprint == torch_print + "-onnx-int8"  # the default
    assert models.model_fingerprint(e5_info.name, folder) == torch_print + "-onnx-int8"
    monkeypatch.setenv("RAGINGEST_BACKEND", "torch")  # what the pipeline's model_identity sees
    assert models.model_fingerprint(e5_info.name, folder) == torch_print  # torch keeps its own


@pytest.mark.parametrize(
    ("value", "threads"), [(None, 0), ("1", 1), (" 3 ", 3), ("0", 0), ("-2", 0), ("two", 0)]
)
def test_onnx_threads_follow_omp_num_threads_when_it_is_a_count(monkeypatch, value, threads):
    if value is None:
        monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    else:
        monkeypatch.setenv("OMP_NUM_THREADS", value)
    assert omp_threads() == threads  # 0: ONNX Runtime's own default


def test_pooling_config_of_e5(e5_info):
    assert pooling_config(Path(e5_info.path)) == ("mean", True)


@pytest.mark.slow
def test_onnx_int8_embeddings_close_to_torch(e5_info, monkeypatch):
    from ragingest.models.embeddings import SentenceTransformerEmbeddings

    monkeypatch.delenv("RAGINGEST_BACKEND", raising=False)
    texts = [
        "Для альбомов с красной наклейкой срок выдачи составляет три дня.",
        "The loan period for albums is fourteen days.",
        "short",
    ]
    torch_emb = SentenceTransformerEmbeddings(backend="torch")
    onnx_emb = SentenceTransformerEmbeddings(backend="onnx")
    assert onnx_emb.info.fingerprint.endswith("-onnx-int8")
    a = np.asarray(torch_emb.embed_documents(texts))
    b = np.asarray(onnx_emb.embed_documents(texts))
    assert b.shape == a.shape
    assert np.allclose(np.linalg.norm(b, axis=1), 1, atol=1e-4)
    assert (np.sum(a * b, axis=1) > 0.95).all()
    query = np.asarray(onnx_emb.embed_query("Сколько дней выдают альбом?"))
    assert int(np.argmax(b @ query)) == int(np.argmax(a @ query))
    folder = models.cache_dir() / "onnx" / onnx_emb.info.fingerprint
    assert (folder / onnx_export.MODEL_FILE).is_file()


def test_onnx_vector_of_a_text_does_not_depend_on_its_batch(monkeypatch):
    from ragingest.models.embeddings import SentenceTransformerEmbeddings

    monkeypatch.delenv("RAGINGEST_BACKEND", raising=False)
    emb = SentenceTransformerEmbeddings()
    text = "Для альбомов с красной наклейкой срок выдачи составляет три дня."
    others = ["коротко", "The loan period for albums is fourteen days. " * 20]
    alone = np.asarray(emb.embed_documents([text]))[0]
    batched = np.asarray(emb.embed_documents([*others, text]))[2]
    assert np.array_equal(alone, batched)
