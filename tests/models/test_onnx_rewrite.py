"""``onnx_rewrite.for_one_text`` swaps ONNX Runtime's slow fused CPU kernels for plain ops that
compute the same for one unpadded text: a small graph of each fused op, before and after."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from ragingest.models.onnx_rewrite import for_one_text

HIDDEN, HEADS, LENGTH = 32, 4, 7
_MS = "com.microsoft"


def _save(path: Path, nodes: list, inputs: list[str], weights: dict[str, np.ndarray]) -> Path:
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, "s", HIDDEN])
            if n != "mask"
            else helper.make_tensor_value_info(n, TensorProto.INT32, [1])
            for n in inputs
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, k) for k, v in weights.items()],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(_MS, 1)]
    )
    onnx.save_model(model, str(path))
    return path


def _run(path: Path, feeds: dict[str, np.ndarray]) -> np.ndarray:
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)[0]


def _ops(path: Path) -> list[tuple[str, int]]:
    return [(n.op_type, len(n.input)) for n in onnx.load(str(path)).graph.node]


def _random(*shape: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_skip_layer_norm_becomes_plain_ops_with_the_same_output(tmp_path):
    weights = {"gamma": _random(HIDDEN, seed=1), "beta": _random(HIDDEN, seed=2)}
    weights["bias"] = _random(HIDDEN, seed=3)
    node = helper.make_node(
        "SkipLayerNormalization", ["x", "skip", "gamma", "beta", "bias"], ["y"],
        domain=_MS, epsilon=1e-12,
    )  # fmt: skip
    path = _save(tmp_path / "g.onnx", [node], ["x", "skip"], weights)
    feeds = {"x": _random(1, LENGTH, HIDDEN, seed=4), "skip": _random(1, LENGTH, HIDDEN, seed=5)}
    fused = _run(path, feeds)

    for_one_text(path)

    assert _ops(path) == [
        ("Add", 2), ("Add", 2), ("ReduceMean", 1), ("Sub", 2),
        ("SimplifiedLayerNormalization", 2), ("Add", 2),
    ]  # fmt: skip
    np.testing.assert_allclose(_run(path, feeds), fused, atol=1e-5, rtol=0)


def test_attention_drops_the_mask_of_a_lone_unpadded_text(tmp_path):
    weights = {"w": _random(HIDDEN, 3 * HIDDEN, seed=6) * 0.2, "b": _random(3 * HIDDEN, seed=7)}
    node = helper.make_node(
        "Attention", ["x", "w", "b", "mask"], ["y"], domain=_MS, num_heads=HEADS
    )
    path = _save(tmp_path / "g.onnx", [node], ["x", "mask"], weights)
    x = _random(1, LENGTH, HIDDEN, seed=8)
    feeds = {"x": x, "mask": np.asarray([LENGTH], np.int32)}
    masked = _run(path, feeds)

    for_one_text(path)

    assert _ops(path) == [("Attention", 3)]
    np.testing.assert_array_equal(_run(path, feeds), masked)


def test_a_skip_layer_norm_whose_sum_is_read_stays_fused(tmp_path):
    weights = {"gamma": _random(HIDDEN, seed=1), "beta": _random(HIDDEN, seed=2)}
    nodes = [
        helper.make_node(
            "SkipLayerNormalization",
            ["x", "skip", "gamma", "beta"],
            ["n", "", "", "sum"],
            domain=_MS,
            epsilon=1e-12,
        ),
        helper.make_node("Add", ["n", "sum"], ["y"]),
    ]
    path = _save(tmp_path / "g.onnx", nodes, ["x", "skip"], weights)

    for_one_text(path)

    assert _ops(path) == [("SkipLayerNormalization", 4), ("Add", 2)]
