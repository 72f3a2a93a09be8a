"""A BERT encoder's fused float32 ONNX graph built straight from its weights, without torch.

The graph is the one ONNX Runtime's BERT optimizer makes of a ``torch.onnx`` export of
``BertModel`` (``last_hidden_state``): ``EmbedLayerNormalization``, then per layer a fused
``Attention`` (query, key and value weights side by side), ``SkipLayerNormalization`` after the
attention output and the feed-forward output, ``BiasGelu`` (exact, erf) between. The same
weights in the same ops, so ``onnx_backend`` quantizes it to the same int8 file the torch route
gave. Hand-built because neither onnx nor ONNX Runtime ships a converter from weights; torch's
exporter is the only other route (``torch_export``, the ``[torch]`` extra).

Contract: inputs ``input_ids`` and ``attention_mask`` (int64, batch × sequence, padding on the
right), every token of segment 0 (one text per sequence, as ragingest embeds); positions
``0..n-1`` (``BertModel``'s absolute positions; not RoBERTa's offset ones).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

# ONNX Runtime's contrib ops (EmbedLayerNormalization, Attention, SkipLayerNormalization,
# BiasGelu) live in this domain, version 1
_MS = "com.microsoft"
OPSET = 17  # the torch export's opset
_INPUT_NAMES = ("input_ids", "attention_mask")


def supports(folder: Path) -> bool:
    """``folder`` holds a plain BERT encoder this module can build: ``config.json`` of
    ``model_type`` bert with absolute positions and GELU, and ``model.safetensors``."""
    path = folder / "config.json"
    if not (path.is_file() and (folder / "model.safetensors").is_file()):
        return False
    config = json.loads(path.read_text(encoding="utf-8"))
    return (
        config.get("model_type") == "bert"
        and config.get("position_embedding_type", "absolute") == "absolute"
        and config.get("hidden_act") == "gelu"
    )


def _weights(folder: Path) -> dict[str, np.ndarray]:
    """The float32 weights by ``BertModel``'s names (a ``bert.`` prefix dropped)."""
    from safetensors.numpy import load_file

    tensors = load_file(str(folder / "model.safetensors"))
    return {k.removeprefix("bert."): v.astype("float32") for k, v in tensors.items()}


def build_bert_graph(folder: Path, target: Path) -> Path:
    """Write ``folder``'s BERT encoder (``supports``) as a fused float32 ONNX file ``target``."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    w = _weights(folder)
    heads, eps = int(config["num_attention_heads"]), float(config["layer_norm_eps"])
    inits: list[Any] = []
    nodes: list[Any] = []

    def init(name: str, array: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def linear(x: str, prefix: str, out: str) -> str:
        """``x @ W^T`` (the bias is added by the fused op that follows)."""
        weight = init(f"{prefix}.weight_t", w[f"{prefix}.weight"].T)
        nodes.append(helper.make_node("MatMul", [x, weight], [out]))
        return out

    def skip_norm(x: str, skip: str, prefix: str, norm: str, out: str) -> str:
        names = [f"{norm}.weight", f"{norm}.bias", f"{prefix}.bias"]
        inputs = [x, skip, *(init(n, w[n]) for n in names)]
        nodes.append(
            helper.make_node("SkipLayerNormalization", inputs, [out], domain=_MS, epsilon=eps)
        )
        return out

    nodes += [
        helper.make_node("Cast", ["input_ids"], ["ids32"], to=TensorProto.INT32),
        helper.make_node("Cast", ["attention_mask"], ["mask32"], to=TensorProto.INT32),
        helper.make_node("Shape", ["input_ids"], ["ids_shape"]),
        helper.make_node(
            "ConstantOfShape",
            ["ids_shape"],
            ["segment_ids"],
            value=helper.make_tensor("zero", TensorProto.INT32, [1], [0]),
        ),
    ]
    emb = "embeddings"
    tables = [f"{emb}.{t}_embeddings.weight" for t in ("word", "position", "token_type")]
    norm = [f"{emb}.LayerNorm.weight", f"{emb}.LayerNorm.bias"]
    nodes.append(
        helper.make_node(
            "EmbedLayerNormalization",
            ["ids32", "segment_ids", *(init(n, w[n]) for n in [*tables, *norm]), "mask32"],
            ["hidden_0", "mask_index"],
            domain=_MS,
            epsilon=eps,
        )
    )
    hidden = "hidden_0"
    layers = int(config["num_hidden_layers"])
    for i in range(layers):
        p = f"encoder.layer.{i}"
        qkv = [f"{p}.attention.self.{n}" for n in ("query", "key", "value")]
        weight = np.concatenate([w[f"{n}.weight"].T for n in qkv], axis=1)
        bias = np.concatenate([w[f"{n}.bias"] for n in qkv])
        attn_inputs = [hidden, init(f"{p}.qkv.weight", weight), init(f"{p}.qkv.bias", bias)]
        nodes.append(
            helper.make_node(
                "Attention",
                [*attn_inputs, "mask_index"],
                [f"{p}.context"],
                domain=_MS,
                num_heads=heads,
            )
        )
        dense = linear(f"{p}.context", f"{p}.attention.output.dense", f"{p}.attn_dense")
        normed = skip_norm(
            dense, hidden, f"{p}.attention.output.dense", f"{p}.attention.output.LayerNorm",
            f"{p}.attn_out",
        )  # fmt: skip
        up = linear(normed, f"{p}.intermediate.dense", f"{p}.up")
        bias_name = init(f"{p}.intermediate.dense.bias", w[f"{p}.intermediate.dense.bias"])
        nodes.append(helper.make_node("BiasGelu", [up, bias_name], [f"{p}.gelu"], domain=_MS))
        down = linear(f"{p}.gelu", f"{p}.output.dense", f"{p}.down")
        out = "last_hidden_state" if i == layers - 1 else f"{p}.out"
        hidden = skip_norm(down, normed, f"{p}.output.dense", f"{p}.output.LayerNorm", out)

    dims = ["batch", "sequence"]
    graph = helper.make_graph(
        nodes,
        "bert",
        [helper.make_tensor_value_info(n, TensorProto.INT64, dims) for n in _INPUT_NAMES],
        [helper.make_tensor_value_info(hidden, TensorProto.FLOAT, [*dims, config["hidden_size"]])],
        inits,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid(_MS, 1)],
        producer_name="ragingest",
    )
    # over 2 GB a graph must keep its weights outside; BERT-base-sized encoders are far below
    onnx.save_model(model, str(target))
    return target
