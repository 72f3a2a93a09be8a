"""``RAGINGEST_TEST_JITTER`` perturbs every vector the real model computes (tests/conftest.py
calls ``install`` when it is set: the product knows nothing of it).

Real-model floats differ between CPUs (AVX2 against AVX-512 kernels), thread counts and
backends, so a test that asserts an order decided by near-tied scores passes on one machine and
fails on the next. With ``RAGINGEST_TEST_JITTER=1e-2`` (a relative size) the suite runs as if on
another machine (``scripts/test.sh`` runs the tests marked ``model`` so, and with ``-1e-2``, in
the pytest process:
``install`` wraps the model the process loads, so a ``model`` test runs in process):

- every vector the model returns gets seeded Gaussian noise of that relative size: each
  coordinate moves by a standard deviation of ``size × ‖vector‖`` (then the vector is normalized
  again when it was), so every cosine score moves by about ``size × √2``. Other CPUs move
  e5's int8 scores by more than 1e-3: a gap of 0.0026 between two chunks' scores flipped on an
  AMD EPYC (AVX2); ``1e-2`` flips it here too, ``1e-3`` does not. The noise is seeded from the
  text with its prompt: one text gets one vector within a run and across runs; ``-1e-2`` turns
  each text's noise the other way, so of the two passes ``scripts/test.sh`` runs, one narrows
  every gap that the other widens (a margin that holds in both holds by the noise's own size);
- ONNX Runtime runs with another intra-op thread count than it would (``jitter_threads``),
  which changes the order of its float sums.

Unset, ``with_test_jitter`` hands the model back as is and ``jitter_threads`` the thread count
it was given. Never set it outside tests: the vectors it gives are the model's plus noise, and
the embedding caches keep them under the model's fingerprint.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

JITTER_ENV = "RAGINGEST_TEST_JITTER"


def jitter_size() -> float | None:
    """The relative noise size from ``$RAGINGEST_TEST_JITTER``; None when unset or empty. A
    negative size is the same noise turned the other way."""
    raw = os.environ.get(JITTER_ENV, "").strip()
    if not raw:
        return None
    size = float(raw)
    if not 0 < abs(size) < 1:
        raise ValueError(f"{JITTER_ENV} must be a relative size in (-1, 1), not 0, got {raw!r}")
    return size


def jitter_threads(threads: int) -> int:
    """The intra-op thread count ONNX Runtime gets: ``threads`` (0: its default, one per
    physical core), or under the jitter another count (1, or 2 where it would run one)."""
    if jitter_size() is None:
        return threads
    would_run = threads or os.cpu_count() or 1
    return 2 if would_run == 1 else 1


def install(setattr_: Callable[[Any, str, Any], None] = setattr) -> None:
    """Wrap the product's model load (``resolve._load_model``) in ``with_test_jitter`` and its
    ONNX Runtime thread count (``onnx_backend.intra_op_threads``) in ``jitter_threads``; before
    the process loads a model (the load is cached per process). ``setattr_``: how to patch
    (pytest's ``monkeypatch.setattr`` in a test of this)."""
    from ragingest.models import onnx_backend, resolve

    load, threads = resolve._load_model, onnx_backend.intra_op_threads
    setattr_(resolve, "_load_model", lambda name, backend: with_test_jitter(load(name, backend)))
    setattr_(onnx_backend, "intra_op_threads", lambda: jitter_threads(threads()))


def with_test_jitter(model: Any) -> Any:
    """``model`` itself, or under the jitter a ``JitteredModel`` around it."""
    size = jitter_size()
    return model if size is None else JitteredModel(model, size)


def jitter_vector(vector: np.ndarray, text: str, size: float) -> np.ndarray:
    """``vector`` plus Gaussian noise of standard deviation ``size × ‖vector‖`` per coordinate,
    seeded from ``text`` (float32; a unit vector stays a unit vector)."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
    noise = np.random.default_rng(seed).standard_normal(vector.shape[-1])
    norm = float(np.linalg.norm(vector))
    moved = vector + noise * (size * norm)
    if abs(norm - 1.0) < 1e-3:
        moved = moved / np.linalg.norm(moved)
    return moved.astype(np.float32)


class JitteredModel:
    """The model's ``encode`` with ``jitter_vector`` applied to each row; every other
    attribute is the model's own."""

    def __init__(self, model: Any, size: float) -> None:
        self.inner = model
        self.size = size

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def encode(
        self, sentences: str | Sequence[str], prompt: str | None = None, **kwargs: Any
    ) -> Any:
        """The inner model's vectors of ``sentences`` with ``jitter_vector`` applied to each row."""
        rows = self.inner.encode(sentences, prompt=prompt, **kwargs)
        texts = [sentences] if isinstance(sentences, str) else list(sentences)
        array = np.asarray(rows)
        single = array.ndim == 1
        matrix = array[None, :] if single else array
        moved = np.stack(
            [jitter_vector(row, (prompt or "") + text, self.size)
             for row, text in zip(matrix, texts, strict=True)]
        ) if len(texts) else matrix
        return moved[0] if single else moved
