"""Retrieval metrics over character ranges — the one place they are defined.

``recall``, ``precision``, ``iou`` and ``precision_omega`` follow Chroma's report "Evaluating
Chunking Strategies for Retrieval" (Smith & Troynikov, 2024) and its code
(``chunking_evaluation/evaluation_framework/base_evaluation.py``) to the character, quirks
included:

- a chunk and a reference *intersect* when ``max(starts) <= min(ends)``, so a chunk that only
  touches a reference (``chunk.end == ref.start``) counts as touching it (this matters for
  ``precision_omega`` only: it adds that chunk's length to the denominator);
- ``covered`` = the union of the intersections of the retrieved chunks (of the question's own
  corpus) with the references;
- recall = covered / *sum* of the reference lengths;
- precision = covered / *sum* of the lengths of all retrieved chunks (not their union; a hit
  from another corpus counts in the denominator only);
- IoU = covered / (sum of retrieved lengths + reference characters no retrieved chunk covers);
- precision_omega = the same ratio over *every* chunk of the corpus that touches a reference,
  with the union of those chunks (plus any uncovered reference characters) as the denominator:
  the best precision a retriever could reach with these chunks. It needs no model.

Our additions, per question: ``recall_at_k`` (1 when every reference lies wholly inside the
union of the retrieved chunks), ``mrr`` (1 / rank of the first hit with a positive-length
overlap with a reference, 0 if none), ``duplicate_rate`` (share of hits that overlap a
higher-ranked hit of the same file or repeat its text nearly word for word) and
``context_tokens`` (model tokens of the top k together).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ragingest.retrieval.passages import near_identical

Range = tuple[int, int]

METRICS = (
    "recall",
    "precision",
    "iou",
    "recall_at_k",
    "mrr",
    "duplicate_rate",
    "context_tokens",
)


@dataclass(frozen=True)
class Reference:
    """One relevant excerpt of a question: ``[start, end)`` in the corpus file ``corpus_id``."""
    corpus_id: str
    start: int
    end: int


@dataclass(frozen=True)
class Hit:
    """One retrieved chunk: where it lies, and (for duplicates and context size) its text."""

    corpus_id: str
    start: int
    end: int
    text: str = ""
    tokens: int = 0


# -- Chroma's range helpers, as written there ------------------------------------------------
def sum_of_ranges(ranges: Iterable[Range]) -> int:
    """The total length of ``ranges`` (overlaps counted twice)."""
    return sum(end - start for start, end in ranges)


def union_ranges(ranges: Sequence[Range]) -> list[Range]:
    """``ranges`` merged where they overlap or touch, sorted by start."""
    if not ranges:
        return []
    ordered = sorted(ranges, key=lambda r: r[0])
    merged = [ordered[0]]
    for start, end in ordered[1:]:
        last_start, last_end = merged[-1]
        if start <= last_end:
            merged[-1] = (last_start, max(last_end, end))
        else:
            merged.append((start, end))
    return merged


def intersect_two_ranges(a: Range, b: Range) -> Range | None:
    """The overlap of ``a`` and ``b``, ``None`` when they are disjoint."""
    start, end = max(a[0], b[0]), min(a[1], b[1])
    return (start, end) if start <= end else None


def difference(ranges: Sequence[Range], target: Range) -> list[Range]:
    """The parts of ``ranges`` outside ``target``."""
    result: list[Range] = []
    target_start, target_end = target
    for start, end in ranges:
        if end < target_start or start > target_end:
            result.append((start, end))
        elif start < target_start and end > target_end:
            result.append((start, target_start))
            result.append((target_end, end))
        elif start < target_start:
            result.append((start, target_start))
        elif end > target_end:
            result.append((target_end, end))
    return result


# -- per question ------------------------------------------------------------------------------
def _walk(
    references: Sequence[Reference], chunks: Iterable[Hit]
) -> tuple[list[Range], list[Range], list[Range]]:
    """(covered reference ranges, reference ranges left uncovered, union of the chunks that
    touch a reference), Chroma's way: only chunks of the references' corpus count."""
    covered: list[Range] = []
    touching: list[Range] = []
    unused = [(r.start, r.end) for r in references]
    corpus = references[0].corpus_id if references else None
    for chunk in chunks:
        if chunk.corpus_id != corpus:
            continue
        for ref in references:
            inter = intersect_two_ranges((chunk.start, chunk.end), (ref.start, ref.end))
            if inter is not None:
                unused = difference(unused, inter)
                covered = union_ranges([inter, *covered])
                touching = union_ranges([(chunk.start, chunk.end), *touching])
    return covered, unused, touching


def _coverage(references: Sequence[Reference], chunks: Iterable[Hit]) -> tuple[int, list[Range]]:
    """(covered characters, reference ranges left uncovered)."""
    covered, unused, _ = _walk(references, chunks)
    return sum_of_ranges(covered), unused


def recall(references: Sequence[Reference], hits: Sequence[Hit]) -> float:
    """The share of the references' characters the hits cover (in 0..1)."""
    covered, _ = _coverage(references, hits)
    return covered / sum_of_ranges((r.start, r.end) for r in references)


def precision(references: Sequence[Reference], hits: Sequence[Hit]) -> float:
    """The share of the hits' characters inside a reference (0.0 for no hits)."""
    covered, _ = _coverage(references, hits)
    retrieved = sum_of_ranges((h.start, h.end) for h in hits)
    return covered / retrieved if retrieved else 0.0


def iou(references: Sequence[Reference], hits: Sequence[Hit]) -> float:
    """Covered characters over the hits' characters plus the uncovered reference characters (0.0
    when both are empty)."""
    covered, unused = _coverage(references, hits)
    denominator = sum_of_ranges((h.start, h.end) for h in hits) + sum_of_ranges(unused)
    return covered / denominator if denominator else 0.0


def precision_omega(references: Sequence[Reference], chunks: Sequence[Hit]) -> float:
    """Best-case precision: every chunk of the corpus touching a reference is "retrieved"."""
    covered, unused, touching = _walk(references, chunks)
    if not covered:
        return 0.0
    denominator = sum_of_ranges(union_ranges(touching + unused))
    return sum_of_ranges(covered) / denominator if denominator else 0.0


def recall_at_k(references: Sequence[Reference], hits: Sequence[Hit]) -> float:
    """1.0 when every reference lies wholly inside the union of the hits in its file, else 0.0."""
    spans = union_ranges([(h.start, h.end) for h in hits if h.corpus_id == references[0].corpus_id])
    inside = all(any(s <= r.start and r.end <= e for s, e in spans) for r in references)
    return 1.0 if inside else 0.0


def mrr(references: Sequence[Reference], hits: Sequence[Hit]) -> float:
    """1 / the rank of the first hit overlapping a reference, 0.0 when none does."""
    for rank, hit in enumerate(hits, 1):
        for ref in references:
            if hit.corpus_id == ref.corpus_id and min(hit.end, ref.end) > max(hit.start, ref.start):
                return 1.0 / rank
    return 0.0


def duplicate_rate(hits: Sequence[Hit]) -> float:
    """Share of hits that overlap (positive length) a higher-ranked hit of the same file, or
    whose text is near-identical to one's."""
    if not hits:
        return 0.0
    duplicates = 0
    for i, hit in enumerate(hits):
        for earlier in hits[:i]:
            same_file = earlier.corpus_id == hit.corpus_id
            overlap = same_file and min(earlier.end, hit.end) > max(earlier.start, hit.start)
            if overlap or near_identical(earlier.text, hit.text):
                duplicates += 1
                break
    return duplicates / len(hits)


def context_tokens(hits: Sequence[Hit]) -> int:
    """The hits' total size in tokens."""
    return sum(h.tokens for h in hits)


def question_scores(references: Sequence[Reference], hits: Sequence[Hit]) -> dict[str, float]:
    """Every per-question metric of ``METRICS`` for one question's top k."""
    return {
        "recall": recall(references, hits),
        "precision": precision(references, hits),
        "iou": iou(references, hits),
        "recall_at_k": recall_at_k(references, hits),
        "mrr": mrr(references, hits),
        "duplicate_rate": duplicate_rate(hits),
        "context_tokens": float(context_tokens(hits)),
    }


def mean_std(values: Sequence[float]) -> tuple[float, float]:
    """Mean and population standard deviation (numpy's default, as in Chroma's code)."""
    if not values:
        return 0.0, 0.0
    mean = sum(values) / len(values)
    return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
