"""Chroma's chunking metrics, checked against values computed by hand."""

from __future__ import annotations

import pytest

from ragingest.evaluate import metrics as m
from ragingest.evaluate.metrics import Hit, Reference


def refs(*spans: tuple[int, int], corpus: str = "a") -> list[Reference]:
    return [Reference(corpus, s, e) for s, e in spans]


def hits(*spans: tuple[int, int], corpus: str = "a") -> list[Hit]:
    return [Hit(corpus, s, e) for s, e in spans]


def test_one_reference_across_two_chunks():
    # reference [30, 50); chunks [40, 80) and [0, 40) cover 10 + 10 characters
    r, h = refs((30, 50)), hits((40, 80), (0, 40))
    assert m.recall(r, h) == 1.0
    assert m.precision(r, h) == 20 / 80
    assert m.iou(r, h) == 20 / 80
    # only the first chunk: 10 covered, 10 left over
    assert m.recall(r, h[:1]) == 10 / 20
    assert m.precision(r, h[:1]) == 10 / 40
    assert m.iou(r, h[:1]) == 10 / (40 + 10)
    assert m.recall_at_k(r, h) == 1.0 and m.recall_at_k(r, h[:1]) == 0.0
    assert m.mrr(r, h) == 1.0


def test_precision_sums_overlapping_hits_and_counts_other_corpora():
    # two overlapping hits [0, 60) and [40, 100) over reference [50, 70): covered 20 once,
    # but the precision denominator is 60 + 60 (a sum, not the union 100), plus 30 from b
    r = refs((50, 70))
    h = [*hits((0, 60), (40, 100)), Hit("b", 0, 30)]
    assert m.recall(r, h) == 1.0
    assert m.precision(r, h) == 20 / 150
    assert m.iou(r, h) == 20 / 150
    assert m.duplicate_rate(h) == 1 / 3


def test_two_references_partly_found():
    # references [10, 20) and [100, 140); hit [0, 15) covers 5, hit [120, 200) covers 20
    r = refs((10, 20), (100, 140))
    h = hits((120, 200), (0, 15), (300, 310))
    assert m.recall(r, h) == 25 / 50
    assert m.precision(r, h) == 25 / (80 + 15 + 10)
    # uncovered: [15, 20) and [100, 120) = 25
    assert m.iou(r, h) == 25 / (105 + 25)
    assert m.recall_at_k(r, h) == 0.0
    assert m.mrr(r, h) == 1.0
    assert m.mrr(r, hits((300, 310), (0, 15))) == 1 / 2
    assert m.mrr(r, hits((20, 30))) == 0.0  # touching is no overlap for MRR


def test_a_miss_scores_zero():
    r = refs((10, 20))
    assert (m.recall(r, hits((50, 90))), m.precision(r, hits((50, 90)))) == (0.0, 0.0)
    assert m.iou(r, hits((50, 90))) == 0.0
    assert m.recall(r, [Hit("b", 10, 20)]) == 0.0  # same offsets, another file


def test_precision_omega_counts_touching_chunks_like_chroma():
    # chunks [0, 50), [50, 100), [100, 150); reference [60, 100) touches [100, 150) at 100:
    # Chroma's intersect() accepts max(starts) <= min(ends), so that chunk joins the union
    chunks = hits((0, 50), (50, 100), (100, 150))
    assert m.precision_omega(refs((60, 100)), chunks) == 40 / 100
    # reference [60, 90) touches only [50, 100)
    assert m.precision_omega(refs((60, 90)), chunks) == 30 / 50
    # with a gap no chunk covers: [45, 55) over chunks [0, 48) and [52, 100)
    gap = hits((0, 48), (52, 100))
    assert m.precision_omega(refs((45, 55)), gap) == 6 / 100


def test_recall_sums_references_chroma_style():
    # overlapping references [0, 20) and [10, 30): denominator is 20 + 20, covered is 30
    r = refs((0, 20), (10, 30))
    assert m.recall(r, hits((0, 100))) == 30 / 40


def test_duplicates_and_context_tokens():
    h = [
        Hit("a", 0, 10, "the same words here again", 5),
        Hit("b", 0, 10, "the same words here again", 5),  # another file, same text
        Hit("a", 20, 30, "something else entirely now", 6),
        Hit("a", 25, 40, "else entirely now and more", 7),  # overlaps the third
    ]
    assert m.duplicate_rate(h) == 2 / 4
    assert m.context_tokens(h) == 23
    assert m.duplicate_rate([]) == 0.0


def test_mean_std_is_population():
    mean, std = m.mean_std([0.0, 1.0])
    assert (mean, std) == (0.5, 0.5)


def test_range_helpers_match_chroma():
    assert m.union_ranges([(5, 10), (0, 3), (3, 4), (9, 12)]) == [(0, 4), (5, 12)]
    assert m.intersect_two_ranges((0, 10), (10, 20)) == (10, 10)
    assert m.intersect_two_ranges((0, 10), (11, 20)) is None
    assert m.difference([(0, 10), (20, 30)], (5, 25)) == [(0, 5), (25, 30)]
    assert m.difference([(0, 30)], (10, 20)) == [(0, 10), (20, 30)]
    assert m.sum_of_ranges([(0, 10), (20, 25)]) == 15


@pytest.mark.parametrize("k", [1, 3])
def test_question_scores_has_every_metric(k):
    scores = m.question_scores(refs((0, 10)), hits(*[(i * 10, i * 10 + 10) for i in range(k)]))
    assert set(scores) == set(m.METRICS)
    assert scores["recall"] == 1.0 and scores["precision"] == 1 / k
