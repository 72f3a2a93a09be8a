"""Building the int8 ONNX file that ``onnx_backend`` runs, offline, once per model fingerprint.

Contract: ``export_int8(folder, target)`` returns the model file to open (``MAPPED_FILE``, its
weights memory-mapped, or ``MODEL_FILE`` where that copy cannot be written); it exports and
quantizes ``folder``'s transformer at most once per ``target`` (a file lock between processes,
atomic renames), in a child process (``python -m ragingest.models.onnx_export FOLDER TARGET``)
so the ingest process never holds the fp32 export, and raises ``RuntimeError`` with the child's
last line when the export fails. ``float_graph`` is the fused float32 graph before quantization.
Building needs the ``onnx`` package (a dependency).
"""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path

from ragingest.models.kernels import build_kernel, choose_kernel

log = logging.getLogger(__name__)

# the graph's revision: a new one is built beside an older file (the same model's vectors, closer
# to its float ones, so the model fingerprint stays); the older files go once it is in place
REVISION = 2  # 2: rewritten for one text per run (``onnx_rewrite``), int8 smoothed
MODEL_FILE = f"model_r{REVISION}.onnx"  # fused (BERT-like), built as ``kernels.choose_kernel``
MAPPED_FILE = f"model_r{REVISION}.mapped.onnx"  # the same, its weights in MAPPED_FILE + ".data"
_OLDER_FILES = ("model_int8.onnx", "model_int8.mapped.onnx", "model_int8.mapped.onnx.data")


def export_int8(folder: str | Path, target: Path) -> Path:
    """Export ``folder``'s transformer to ONNX and quantize it to int8 (once; atomic), in a
    child process: the export holds the fp32 model and its graph (~1.5 GB), which an ingest
    process should not keep as its peak memory."""
    final = target / MODEL_FILE
    if final.is_file():
        return mapped_copy(final)
    from filelock import FileLock  # the export alone: a query's model is there

    target.mkdir(parents=True, exist_ok=True)
    # processes starting at once (parallel test workers, two first ingests) wait for one
    # export instead of each spending a minute of CPU on the same file
    with FileLock(target / ".export.lock"):
        if not final.is_file():
            _export_in_child(folder, target)
        _remove_older(target)
        return mapped_copy(final)


def _remove_older(target: Path) -> None:
    """Drop the files of an older revision of this model (ragingest's own cache; a process
    still mapping one keeps its pages until it exits)."""
    for name in _OLDER_FILES:
        with contextlib.suppress(OSError):
            (target / name).unlink()


def _export_in_child(folder: str | Path, target: Path) -> None:
    log.warning("exporting %s to ONNX int8 (once, about a minute)", Path(folder).name)
    command = [sys.executable, "-m", "ragingest.models.onnx_export", str(folder), str(target)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0 or not (target / MODEL_FILE).is_file():
        detail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise RuntimeError(f"exporting the model to ONNX failed: {detail[0]}")


def mapped_copy(model_file: Path) -> Path:
    """``model_file`` saved once more beside it (``MAPPED_FILE``), its weights in a separate
    file that ONNX Runtime memory-maps instead of parsing and copying them out of the graph: a
    session of the 118 MB e5 model opens in ~0.1 s instead of ~0.4 s, the same graph and
    weights. Written once (atomic: the weights, then the graph); ``model_file`` itself when
    that fails."""
    mapped = model_file.with_name(MAPPED_FILE)
    if mapped.is_file():
        return mapped
    weights = MAPPED_FILE + ".data"
    try:
        import onnx

        model = onnx.load(str(model_file))
        with tempfile.TemporaryDirectory(dir=model_file.parent) as tmp:
            onnx.save_model(
                model,
                str(Path(tmp) / MAPPED_FILE),
                save_as_external_data=True,
                all_tensors_to_one_file=True,
                location=weights,
                size_threshold=1024,
            )
            for name in (weights, MAPPED_FILE):
                (Path(tmp) / name).chmod(0o644)  # as readable as the single file
            os.replace(Path(tmp) / weights, mapped.with_name(weights))
            os.replace(Path(tmp) / MAPPED_FILE, mapped)
    except Exception as exc:  # a read-only cache, a full disk: the single file still works
        log.warning("kept the single-file ONNX model (%s)", exc)
        return model_file
    return mapped


def _export(folder: str | Path, target: Path) -> Path:
    final = target / MODEL_FILE

    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target) as tmp, _quiet():
        fused = float_graph(Path(folder), Path(tmp))
        quantized = Path(tmp) / MODEL_FILE
        # int8 unless this CPU says fp32; smoothed with the folder's tokenizer
        build_kernel(fused, quantized, choose_kernel(), Path(folder))
        os.replace(quantized, final)  # another process exporting too: the same file wins
    return final


def float_graph(folder: Path, tmp: Path) -> Path:
    """``folder``'s transformer as a fused float32 ONNX file under ``tmp``: built from the
    weights for a plain BERT encoder (``onnx_graph``: the default model; no torch), else
    exported by torch (``torch_export``: the ``[torch]`` extra); then rewritten for one
    unpadded text per run (``onnx_rewrite``)."""
    from ragingest.models import onnx_graph
    from ragingest.models.onnx_rewrite import for_one_text

    if onnx_graph.supports(folder):
        return for_one_text(onnx_graph.build_bert_graph(folder, tmp / "fused.onnx"))
    from ragingest.models.torch_export import export_fused

    return for_one_text(export_fused(folder, tmp))


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """No exporter warnings nor the quantizer's root-logger advice on the user's terminal."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        logging.disable(logging.WARNING)
        try:
            yield
        finally:
            logging.disable(logging.NOTSET)


if __name__ == "__main__":  # export_int8's child process
    _export(sys.argv[1], Path(sys.argv[2]))
