"""The ONNX model is opened from its memory-mapped copy (weights in a separate file), which
gives exactly the single file's vectors."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest

from ragingest.models.locate import cache_dir
from ragingest.models.onnx_export import MAPPED_FILE, MODEL_FILE, export_int8, mapped_copy
from ragingest.models.resolve import load_model_info
from tests.conftest import EXAMPLES

pytestmark = pytest.mark.slow


def _session(path) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.enable_cpu_mem_arena = False
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def test_mapped_copy_gives_the_single_files_outputs():
    info = load_model_info(None, "onnx")
    mapped = export_int8(info.path, cache_dir() / "onnx" / info.fingerprint)
    assert mapped.name == MAPPED_FILE and mapped.with_name(MAPPED_FILE + ".data").is_file()
    assert mapped_copy(mapped.with_name(MODEL_FILE)) == mapped  # written once
    single, fast = _session(mapped.with_name(MODEL_FILE)), _session(mapped)
    texts = [
        line for p in sorted(EXAMPLES.glob("*.md")) for line in p.read_text("utf-8").split("\n\n")
    ]
    assert len(texts) > 20
    names = [i.name for i in single.get_inputs()]
    assert names == [i.name for i in fast.get_inputs()]
    for text in texts[:40]:
        ids, types = info.model_inputs("passage: " + text)
        feed = {"input_ids": [ids], "attention_mask": [[1] * len(ids)], "token_type_ids": [types]}
        feed = {k: np.array(v, dtype=np.int64) for k, v in feed.items() if k in names}
        want, got = single.run(None, feed)[0], fast.run(None, feed)[0]
        assert want.shape == got.shape and np.array_equal(want, got)
