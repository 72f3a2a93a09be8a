"""The default model's ONNX graph is built from its weights without torch (``onnx_graph``),
and it computes what ``transformers``' ``BertModel`` computes (float32, before int8)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ragingest.models import onnx_graph
from tests.extras import missing_env, run_python

pytestmark = pytest.mark.slow

TEXTS = [
    "passage: Для альбомов с красной наклейкой срок выдачи составляет три дня.",
    "query: short",
    "passage: " + "The loan period for albums is fourteen days. " * 50,  # cut at 512 tokens
]

BUILD = """
import sys
from pathlib import Path
from ragingest.models.onnx_export import float_graph
print(float_graph(Path(sys.argv[1]), Path(sys.argv[2])))
"""


@pytest.fixture(scope="module")
def graph(e5_info, tmp_path_factory) -> Path:
    """The float32 graph, built where torch and transformers can't be imported."""
    tmp = tmp_path_factory.mktemp("graph")
    env = missing_env(tmp / "site", ("torch", "transformers", "sentence_transformers"))
    done = run_python(env, BUILD, e5_info.path, str(tmp))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(tmp / "fused.onnx")
    return tmp / "fused.onnx"


def test_the_default_model_is_a_bert_encoder_the_graph_builder_reads(e5_info, tmp_path):
    assert onnx_graph.supports(Path(e5_info.path))
    (tmp_path / "config.json").write_text('{"model_type": "xlm-roberta"}')
    (tmp_path / "model.safetensors").write_bytes(b"")
    assert not onnx_graph.supports(tmp_path)  # another architecture: the torch route


def test_the_graph_computes_what_bert_model_computes(e5_info, graph):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    import onnxruntime as ort

    session = ort.InferenceSession(str(graph), providers=["CPUExecutionProvider"])
    model = transformers.AutoModel.from_pretrained(e5_info.path).eval()
    for text in TEXTS:
        ids, _ = e5_info.model_inputs(text)
        feeds = {"input_ids": np.asarray([ids]), "attention_mask": np.ones((1, len(ids)), int)}
        ours = session.run(None, feeds)[0]
        with torch.no_grad():
            theirs = model(**{k: torch.tensor(v) for k, v in feeds.items()}).last_hidden_state
        # float32 through 12 layers in another operator order: 1-2e-6 apart here
        np.testing.assert_allclose(ours, theirs.numpy(), atol=1e-5, rtol=0)
