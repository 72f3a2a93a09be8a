"""The torch route to a fused float32 ONNX graph, for the models ``onnx_graph`` cannot build from
their weights (not a plain BERT encoder): ``torch.onnx``'s TorchScript exporter, then ONNX
Runtime's BERT optimizer for BERT-like models. Needs the ``[torch]`` extra (torch and
transformers); the default model never comes here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragingest.errors import MissingExtraError

_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def export_fused(folder: Path, tmp: Path) -> Path:
    """``folder``'s transformer (``last_hidden_state``) as a float32 ONNX file under ``tmp``,
    fused where the model is BERT-like. ``MissingExtraError`` without torch or transformers."""
    try:
        import torch
        from transformers import AutoModel, AutoTokenizer
    except ImportError as exc:
        raise MissingExtraError(
            f"exporting {folder.name} to ONNX (not a plain BERT encoder)", "torch"
        ) from exc

    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    # eager attention exports the graph ONNX Runtime's BERT optimizer fuses (see _fuse)
    model = AutoModel.from_pretrained(str(folder), attn_implementation="eager").eval()
    sample = tokenizer(["passage: a", "query: two words"], padding=True, return_tensors="pt")
    names = [n for n in _INPUTS if n in sample]

    class _Hidden(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, *inputs: Any) -> Any:
            return self.inner(**dict(zip(names, inputs, strict=True))).last_hidden_state

    axes = {n: {0: "batch", 1: "sequence"} for n in [*names, "last_hidden_state"]}
    plain = tmp / "model.onnx"
    with torch.no_grad():
        torch.onnx.export(
            _Hidden(model),
            tuple(sample[n] for n in names),
            str(plain),
            input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )
    return _fuse(plain, model.config, tmp / "fused.onnx")


def _fuse(plain: Path, config: Any, target: Path) -> Path:
    """Fuse attention, embeddings + layer norm and GELU for a BERT-like model: a fused
    ``Attention`` never holds the batch × heads × length² scores, so a batch of 512-token
    texts needs a fraction of the memory, and runs faster. Other models stay as exported."""
    if getattr(config, "model_type", "") not in ("bert", "xlm-roberta", "roberta"):
        return plain
    from onnxruntime.transformers.optimizer import optimize_model

    optimized = optimize_model(
        str(plain),
        model_type="bert",
        num_heads=config.num_attention_heads,
        hidden_size=config.hidden_size,
        opt_level=1,
    )
    optimized.save_model_to_file(str(target))
    return target
