"""Orders decided by the real model, asserted only where a stated margin makes them hold on any
CPU: the int8 ONNX and torch kernels give other floats on other CPUs and thread counts, so a
test first checks that the scores it relies on are further apart than that.

That check is itself a comparison of real-model floats, so it holds on every CPU only where
the data's margin exceeds the threshold by what another CPU moves a margin (``CPU_DRIFT``):
a premise is CPU-dependent when its margin lies within that drift of its threshold. The
jitter passes (``RAGINGEST_TEST_JITTER``, ``tests/jitter.py``) stand for such a CPU: the tests
marked ``model`` run with every model vector perturbed, once with each text's noise one way and
once the other, and every margin check asks for the drift on top of its threshold
(``required_margin``). A gap that one pass widens by the noise the other narrows by as much
(to first order), so a premise that passes both holds by its threshold plus the drift plus
that noise, whichever way the noise went: its data carries the margin on the CPUs the normal
pass meets. (One pass alone let a gap of 0.0136 through, widened to 0.0203.)"""

from __future__ import annotations

from typing import Any

from langchain_core.documents import Document

from tests.jitter import jitter_size

# what the tests assert on any CPU: four times the near tie (0.0026) that another CPU flipped
COSINE_MARGIN = 0.01
# how far another CPU moves the gap between two cosines of e5's int8 model: 0.0068 between an
# Intel AVX-512 CPU and an AMD EPYC with AVX2 only (its int8 products take other kernels, not
# only another order of float sums), which failed a premise of 0.01 held here by 0.0162
CPU_DRIFT = 0.01


def required_margin(margin: float = COSINE_MARGIN) -> float:
    """The gap a premise of ``margin`` must show in this run: ``margin``, and under the jitter
    pass ``margin + CPU_DRIFT`` (module docstring)."""
    return margin + CPU_DRIFT if jitter_size() is not None else margin


def ranks(hit: Any) -> tuple[int | None, int | None, float | None]:
    """``(dense_rank, lexical_rank, cosine)`` of a hybrid hit: a retriever's ``Document`` or a
    row of ``ragingest query --json``."""
    meta = hit.metadata if isinstance(hit, Document) else hit
    cosine = meta.get("dense_score", meta.get("cosine"))
    return meta.get("dense_rank"), meta.get("lexical_rank"), cosine


def assert_first_on_any_cpu(hits: list[Any], margin: float = COSINE_MARGIN) -> None:
    """The first hybrid hit is first on any CPU: first by BM25 (words: the same everywhere) and
    first by cosine, ahead of the dense runner-up by ``margin`` (``required_margin``), so its
    fused score is the highest any chunk can have (either fusion). ``hits`` must hold the dense
    runner-up (ask for enough)."""
    dense, lexical, cosine = ranks(hits[0])
    assert (dense, lexical) == (1, 1), f"first by dense {dense}, by BM25 {lexical}"
    runner_up = [ranks(h)[2] for h in hits if ranks(h)[0] == 2]
    assert runner_up, "the dense runner-up is not among the hits: ask for more"
    assert cosine is not None and runner_up[0] is not None
    gap, need = cosine - runner_up[0], required_margin(margin)
    assert gap >= need, f"cosine {cosine} vs runner-up {runner_up[0]}: {gap:.4f} < {need}"


def assert_best_by_margin(scores: Any, index: int, margin: float = COSINE_MARGIN) -> None:
    """``scores[index]`` is the highest of ``scores`` by at least ``margin``
    (``required_margin``)."""
    values = [float(s) for s in scores]
    others = values[:index] + values[index + 1 :]
    assert values[index] - max(others) >= required_margin(margin), values
