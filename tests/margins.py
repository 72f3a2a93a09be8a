"""Orders decided by the real model, asserted only where a stated margin makes them hold on any
CPU: the int8 ONNX and torch kernels give other floats on other CPUs and thread counts (cosines
move by a few 1e-3), so a test first checks that the scores it relies on are further apart
than that.

``RAGINGEST_TEST_JITTER`` (``tests/jitter.py``) checks it: the tests marked
``model`` pass with every model vector perturbed."""

from __future__ import annotations

from typing import Any

from langchain_core.documents import Document

# four times the near tie (0.0026) that another CPU flipped; what the tests that use it hold
# by passes RAGINGEST_TEST_JITTER=1e-2 too (every score moved by ~0.014)
COSINE_MARGIN = 0.01


def ranks(hit: Any) -> tuple[int | None, int | None, float | None]:
    """``(dense_rank, lexical_rank, cosine)`` of a hybrid hit: a retriever's ``Document`` or a
    row of ``ragingest query --json``."""
    meta = hit.metadata if isinstance(hit, Document) else hit
    cosine = meta.get("dense_score", meta.get("cosine"))
    return meta.get("dense_rank"), meta.get("lexical_rank"), cosine


def assert_first_on_any_cpu(hits: list[Any], margin: float = COSINE_MARGIN) -> None:
    """The first hybrid hit is first on any CPU: first by BM25 (words: the same everywhere) and
    first by cosine, ahead of the dense runner-up by ``margin``, so its fused score 2/61 is the
    highest any chunk can have. ``hits`` must hold the dense runner-up (ask for enough)."""
    dense, lexical, cosine = ranks(hits[0])
    assert (dense, lexical) == (1, 1), f"first by dense {dense}, by BM25 {lexical}"
    runner_up = [ranks(h)[2] for h in hits if ranks(h)[0] == 2]
    assert runner_up, "the dense runner-up is not among the hits: ask for more"
    assert cosine is not None and runner_up[0] is not None
    assert cosine - runner_up[0] >= margin, f"cosine {cosine} vs runner-up {runner_up[0]}"


def assert_best_by_margin(scores: Any, index: int, margin: float = COSINE_MARGIN) -> None:
    """``scores[index]`` is the highest of ``scores`` by at least ``margin``."""
    values = [float(s) for s in scores]
    others = values[:index] + values[index + 1 :]
    assert values[index] - max(others) >= margin, values
