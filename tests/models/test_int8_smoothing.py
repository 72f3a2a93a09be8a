"""``int8_smoothing``: linear layers smoothed per input channel compute the same in float and
lose less in int8 where one channel is far above the rest (deterministic test vectors:
a small seeded graph over the default model's tokenizer)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from ragingest.models.int8_smoothing import calibration_texts, smooth_linear_inputs
from ragingest.models.kernels import build_kernel

HIDDEN, INNER = 16, 64


def _graph(path: Path, vocabulary: int) -> Path:
    """ids → embedding → up (channel 5 thirty times the rest) → BiasGelu → down."""
    rng = np.random.default_rng(0)
    up = rng.standard_normal((HIDDEN, INNER)).astype(np.float32) * 0.5
    up[:, 5] *= 30.0
    weights = {
        "table": rng.standard_normal((vocabulary, HIDDEN)).astype(np.float32),
        "up": up,
        "bias": rng.standard_normal(INNER).astype(np.float32) * 0.1,
        "down": rng.standard_normal((INNER, HIDDEN)).astype(np.float32) * 0.2,
    }
    nodes = [
        helper.make_node("Gather", ["table", "input_ids"], ["embedded"]),
        helper.make_node("MatMul", ["embedded", "up"], ["inner"]),
        helper.make_node("BiasGelu", ["inner", "bias"], ["gelu"], domain="com.microsoft"),
        helper.make_node("MatMul", ["gelu", "down"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, "s"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, "s", HIDDEN])],
        [numpy_helper.from_array(v, k) for k, v in weights.items()],
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    onnx.save_model(helper.make_model(graph, opset_imports=opsets), str(path))
    return path


def _run(path: Path, ids: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {"input_ids": ids})[0]


def test_smoothing_keeps_the_float_output_and_halves_the_int8_error(e5_info, tmp_path):
    folder = Path(e5_info.path)
    vocabulary = e5_info.backend_tokenizer.get_vocab_size()
    ids = np.random.default_rng(1).integers(5, vocabulary, (1, 40)).astype(np.int64)
    plain = _graph(tmp_path / "plain.onnx", vocabulary)
    smoothed = _graph(tmp_path / "smoothed.onnx", vocabulary)
    exact = _run(plain, ids)

    assert smooth_linear_inputs(smoothed, folder) == 2  # up and down

    ops = [n.op_type for n in onnx.load(str(smoothed)).graph.node]
    assert ops == ["Gather", "Mul", "MatMul", "BiasGelu", "Mul", "MatMul"]
    np.testing.assert_allclose(_run(smoothed, ids), exact, rtol=1e-4, atol=1e-4)
    build_kernel(plain, tmp_path / "plain_int8.onnx", "int8")
    again = _graph(tmp_path / "again.onnx", vocabulary)
    build_kernel(again, tmp_path / "int8.onnx", "int8", folder)
    error_plain = np.abs(_run(tmp_path / "plain_int8.onnx", ids) - exact).mean()
    error_smoothed = np.abs(_run(tmp_path / "int8.onnx", ids) - exact).mean()
    assert error_smoothed < 0.5 * error_plain, (error_smoothed, error_plain)  # 0.076 vs 0.236


def test_a_shared_weight_and_a_folder_without_a_tokenizer_are_left_alone(e5_info, tmp_path):
    vocabulary = e5_info.backend_tokenizer.get_vocab_size()
    graph = _graph(tmp_path / "g.onnx", vocabulary)
    model = onnx.load(str(graph))
    model.graph.node[1].input[1] = "down_t"  # up and a second layer share one weight
    shared = np.ascontiguousarray(numpy_helper.to_array(model.graph.initializer[3]).T)
    model.graph.initializer.append(numpy_helper.from_array(shared, "down_t"))
    model.graph.node.append(helper.make_node("MatMul", ["embedded", "down_t"], ["z"]))
    model.graph.output.append(helper.make_tensor_value_info("z", TensorProto.FLOAT, None))
    onnx.save_model(model, str(graph))

    assert smooth_linear_inputs(graph, Path(e5_info.path)) == 1  # the down projection only
    assert smooth_linear_inputs(graph, tmp_path) == 0  # no tokenizer.json to calibrate with


def test_calibration_texts_are_chunk_sized_and_cover_the_file():
    texts = calibration_texts()
    assert len(texts) >= 10
    assert max(len(t) for t in texts[:-1]) <= 3000
    assert any("Возврат" in t for t in texts) and any("guest network" in t for t in texts)
