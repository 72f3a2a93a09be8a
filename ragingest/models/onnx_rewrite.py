"""The fused float32 graph rewritten for how ``onnx_backend`` runs it: one unpadded text per run,
on ONNX Runtime's CPU kernels. Same arithmetic up to float rounding (outputs 1-3e-6 apart).

Two rewrites, each because ONNX Runtime's fused CPU kernel is slower than plain ops here
(one ~180-token text, one thread, ONNX Runtime 1.32; bench/README.md, "Encoder per CPU
class"):

- ``SkipLayerNormalization`` (residual add + LayerNorm) becomes ``Add`` (the dense layer's bias,
  next to its ``MatMul`` so the quantizer folds it in), ``Add`` (the residual), ``ReduceMean``,
  ``Sub``, ``SimplifiedLayerNormalization`` (RMS norm, which of a centred row is LayerNorm) and
  ``Add`` (beta): the fused kernel accumulates in scalar doubles and took 0.31 ms per
  178 × 384 tensor, these 0.058 ms; 25 of them were a quarter of the model's time.
- ``Attention`` loses its ``mask_index`` input (when no later input is set): a lone, unpadded
  text's mask is all ones, and reading it cost 15 % of the op (0.83 -> 0.70 ms per layer,
  the same outputs bit for bit).

Contract: ``for_one_text(path)`` rewrites the ONNX file at ``path`` in place and returns it;
the rewritten graph is only valid for inputs whose ``attention_mask`` is all ones (one text per
run, no padding). A ``SkipLayerNormalization`` whose extra outputs (mean, inverse deviation,
sum) are read is left fused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

_MS = "com.microsoft"


def for_one_text(path: Path) -> Path:
    """Rewrite the fused graph at ``path`` (both rewrites above) and save it over ``path``."""
    import onnx

    model = onnx.load(str(path))
    nodes: list[Any] = []
    for node in model.graph.node:
        if _is(node, "SkipLayerNormalization") and not any(node.output[1:]):
            nodes += _unfused_layer_norm(node)
        elif _is(node, "Attention") and len(node.input) > 3 and not any(node.input[4:]):
            nodes.append(_without_mask(node))
        else:
            nodes.append(node)
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    onnx.save_model(model, str(path))
    return path


def _is(node: Any, op_type: str) -> bool:
    return bool(node.op_type == op_type and node.domain == _MS)


def _unfused_layer_norm(node: Any) -> list[Any]:
    """``SkipLayerNormalization(x, skip, gamma[, beta[, bias]])`` as plain ops (module doc)."""
    from onnx import helper

    attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    eps = attributes.get("epsilon", 1e-12)
    x, skip, gamma = node.input[:3]
    beta = node.input[3] if len(node.input) > 3 else ""
    bias = node.input[4] if len(node.input) > 4 else ""
    out = node.output[0]
    name = f"{node.name or out}/unfused"
    nodes = []
    if bias:  # next to the MatMul that made x: the quantizer makes it the MatMul's own bias
        nodes.append(helper.make_node("Add", [x, bias], [f"{name}/biased"]))
        x = f"{name}/biased"
    nodes += [
        helper.make_node("Add", [x, skip], [f"{name}/sum"]),
        helper.make_node("ReduceMean", [f"{name}/sum"], [f"{name}/mean"], axes=[-1]),
        helper.make_node("Sub", [f"{name}/sum", f"{name}/mean"], [f"{name}/centred"]),
        helper.make_node(
            "SimplifiedLayerNormalization",  # ONNX Runtime's RMS norm, in the default domain
            [f"{name}/centred", gamma],
            [f"{name}/scaled" if beta else out],
            epsilon=eps,
            axis=-1,
        ),
    ]
    if beta:
        nodes.append(helper.make_node("Add", [f"{name}/scaled", beta], [out]))
    return nodes


def _without_mask(node: Any) -> Any:
    """The ``Attention`` node with its inputs cut to (input, weights, bias)."""
    from onnx import helper

    lean = helper.make_node("Attention", list(node.input[:3]), list(node.output), name=node.name)
    lean.domain = node.domain
    lean.attribute.extend(node.attribute)
    return lean
