"""The int8 model's linear layers smoothed per input channel before quantization (the
SmoothQuant migration, Xiao et al. 2023), so that dynamic int8 loses a third as much.

Why: ONNX Runtime's dynamic quantization gives each activation tensor one scale. A few
channels sit far above the rest (e5-small, layer 0's GELU output: largest 33, median 0.7), so
one scale spends most of int8's range on them. Dividing input channel ``j`` of a linear layer by
``s_j = a_j^α / w_j^(1−α)`` (``a_j``: its largest activation over the calibration texts;
``w_j``: the largest weight of its row) and multiplying that row of the weight by ``s_j``
computes the same product in float and evens the channels out. 1 − cos to the float model, 60
chunks each of chroma_general and docs_ru_grammy (bench/README.md, "Encoder per CPU class"):
unsmoothed 0.0035 / 0.0036; the down projection (after GELU, the largest error) 0.0018 / 0.0014;
with the up and the query-key-value projections too 0.0012 / 0.0008 (worst text 0.011 → 0.002);
the attention output's projection adds nothing and is left alone. Cost: one elementwise ``Mul``
per smoothed layer. The result hardly depends on the texts (the package's examples, Russian prose
or English: within 0.0003).

Contract: ``smooth_linear_inputs(graph, folder)`` rewrites the float32 ONNX file ``graph`` in
place (the same outputs up to float rounding) and returns how many layers it smoothed: each
``Attention`` (its packed query-key-value weight) and each ``MatMul`` with an initializer weight
(used by no other node) whose input is not an ``Attention`` output; none where ``folder`` has
no ``tokenizer.json``. The calibration texts (``calibration.md``: the
project's sample documents) are tokenized with ``folder``'s ``tokenizer.json``, one text per run,
as the encoder runs them.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

ALPHA = 0.7  # down projection alone, 0.6 / 0.7 / 0.8: 0.0018 / 0.0015 / 0.0019; all, 0.5: 0.0029
CALIBRATION = Path(__file__).with_name("calibration.md")
_TEXT_CHARS = 1200  # calibration texts of a chunk's size (~200 tokens)
_MAX_TOKENS = 512


def smooth_linear_inputs(graph: Path, folder: Path) -> int:
    """Smooth ``graph``'s linear layers (module doc), in place; how many were smoothed."""
    import onnx
    from onnx import helper, numpy_helper

    if not (folder / "tokenizer.json").is_file():  # nothing to calibrate with: left as is
        return 0
    model = onnx.load(str(graph))
    weights = {init.name: init for init in model.graph.initializer}
    uses = Counter(name for n in model.graph.node for name in n.input)
    contexts = {o for n in model.graph.node if n.op_type == "Attention" for o in n.output}
    # a weight two layers share would be scaled twice: left alone
    targets = [
        n for n in model.graph.node
        if len(n.input) > 1 and n.input[1] in weights and uses[n.input[1]] == 1 and (
            n.op_type == "Attention" or (n.op_type == "MatMul" and n.input[0] not in contexts)
        )
    ]  # fmt: skip
    if not targets:
        return 0
    inputs = list(dict.fromkeys(n.input[0] for n in targets))
    largest = _largest_activations(model, inputs, folder, graph.with_suffix(".probe.onnx"))
    nodes: list[Any] = []
    for node in model.graph.node:
        if node in targets:
            weight = numpy_helper.to_array(weights[node.input[1]])  # (in channels, out)
            scale = _scales(largest[node.input[0]], np.abs(weight).max(axis=1))
            smoothed = (weight * scale[:, None]).astype(np.float32)
            weights[node.input[1]].CopyFrom(numpy_helper.from_array(smoothed, node.input[1]))
            layer = node.name or node.output[0]  # an input feeds several layers, each its own
            divisor, evened = f"{layer}/smoothing", f"{layer}/smoothed"
            model.graph.initializer.append(
                numpy_helper.from_array((1.0 / scale).astype(np.float32), divisor)
            )
            nodes.append(helper.make_node("Mul", [node.input[0], divisor], [evened]))
            node.input[0] = evened
        nodes.append(node)
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    onnx.save_model(model, str(graph))
    return len(targets)


def _scales(activations: np.ndarray, weights: np.ndarray) -> np.ndarray:
    a = np.maximum(activations, 1e-5)
    w = np.maximum(weights, 1e-5)
    return (a**ALPHA / w ** (1 - ALPHA)).astype(np.float32)


def _largest_activations(
    model: Any, names: list[str], folder: Path, probe: Path
) -> dict[str, np.ndarray]:
    """Each tensor's largest absolute value per channel over the calibration texts, read by a
    session of ``model`` with ``names`` as extra outputs, saved at ``probe`` (a file, not a
    copy in memory: the float model is ~470 MB) and removed after."""
    import onnx
    import onnxruntime as ort
    from onnx import helper
    from tokenizers import Tokenizer

    outputs = len(model.graph.output)
    for name in names:
        model.graph.output.append(helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    try:
        onnx.save_model(model, str(probe))
    finally:
        del model.graph.output[outputs:]
    options = ort.SessionOptions()
    options.log_severity_level = 3
    try:
        session = ort.InferenceSession(str(probe), options, providers=["CPUExecutionProvider"])
    finally:
        probe.unlink(missing_ok=True)  # the session holds what it needs
    inputs = [i.name for i in session.get_inputs()]
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.enable_truncation(_MAX_TOKENS)
    tokenizer.no_padding()
    largest: dict[str, np.ndarray] = {}
    for text in calibration_texts():
        encoding = tokenizer.encode(text)
        feeds = {
            "input_ids": np.asarray([encoding.ids], dtype=np.int64),
            "attention_mask": np.ones((1, len(encoding.ids)), dtype=np.int64),
            "token_type_ids": np.zeros((1, len(encoding.ids)), dtype=np.int64),
        }
        outputs = session.run(names, {k: v for k, v in feeds.items() if k in inputs})
        for name, value in zip(names, outputs, strict=True):
            row = np.abs(value.reshape(-1, value.shape[-1])).max(axis=0)
            largest[name] = np.maximum(largest[name], row) if name in largest else row
    return largest


def calibration_texts() -> list[str]:
    """``calibration.md`` cut at blank lines into texts of about a chunk's size."""
    texts, current = [], ""
    for block in CALIBRATION.read_text(encoding="utf-8").split("\n\n"):
        if current and len(current) + len(block) > _TEXT_CHARS:
            texts.append(current)
            current = ""
        current = f"{current}\n\n{block}" if current else block
    return [*texts, current] if current else texts
