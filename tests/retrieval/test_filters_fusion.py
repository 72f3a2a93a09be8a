"""``where`` in every accepted form -> one Chroma filter; the two fusions (no model)."""

from __future__ import annotations

import pytest

from ragingest.retrieval.filters import chroma_where
from ragingest.retrieval.fusion import distribution_score_fusion as dbsf
from ragingest.retrieval.fusion import reciprocal_rank_fusion


def test_where_forms():
    assert chroma_where(None) is None and chroma_where({}) is None and chroma_where([]) is None
    assert chroma_where({"source": "a.md"}) == {"source": "a.md"}
    assert chroma_where({"source": "a.md", "language": "ru"}) == {
        "$and": [{"source": "a.md"}, {"language": "ru"}]
    }
    own = {"$or": [{"price": {"$lte": 5000}}, {"source": "b.md"}]}
    assert chroma_where(own) == own
    assert chroma_where(["source=a.md", "price<=5000", "oversized=false", "area>1.5"]) == {
        "$and": [
            {"source": {"$eq": "a.md"}},
            {"price": {"$lte": 5000}},
            {"oversized": {"$eq": False}},
            {"area": {"$gt": 1.5}},
        ]
    }
    assert chroma_where(["h2!=Итоги"]) == {"h2": {"$ne": "Итоги"}}
    with pytest.raises(ValueError, match="bad --where 'price'"):
        chroma_where(["price"])
    with pytest.raises(ValueError, match="its only key"):
        chroma_where({"$and": [{"a": 1}, {"b": 2}], "c": 3})


def test_reciprocal_rank_fusion():
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["c", "d", "a"]], rrf_k=60)
    assert [key for key, _ in fused] == ["a", "c", "b", "d"]  # a and c tie: a is first in list 1
    assert fused[0][1] == pytest.approx(1 / 61 + 1 / 63)
    assert fused[2][1] == pytest.approx(1 / 62)
    once = reciprocal_rank_fusion([["x", "x", "y"]])
    assert once == [("x", pytest.approx(1 / 61)), ("y", pytest.approx(1 / 63))]


def test_dbsf_sums_each_lists_scores_scaled_by_its_spread():
    # a two-hit list is mean +- sd, and mean +- 4 sd spans [0, 1]: 5/8 and 3/8, whatever its scores
    dense = [("a", 0.9), ("b", 0.8)]
    lexical = [("b", 7.0), ("c", 2.0)]
    fused = dbsf([dense, lexical], [0.5, 0.5])
    assert fused == [
        ("b", pytest.approx(1 / 2)),
        ("a", pytest.approx(5 / 16)),
        ("c", pytest.approx(3 / 16)),
    ]
    by_vectors = dbsf([dense, lexical], [0.8, 0.2])
    assert by_vectors == [
        ("a", pytest.approx(0.8 * 5 / 8)),
        ("b", pytest.approx(0.8 * 3 / 8 + 0.2 * 5 / 8)),
        ("c", pytest.approx(0.2 * 3 / 8)),
    ]
    tie = dbsf([[("d", 1.0), ("e", 0.0)], [("e", 1.0), ("d", 0.0)]], [0.5, 0.5])
    assert tie == [("d", pytest.approx(0.5)), ("e", pytest.approx(0.5))]  # d: first in dense


def test_dbsf_scales_by_the_head_and_scores_deeper_hits_on_that_scale():
    head = [("a", 2.0), ("b", 0.0)]  # mean 1, sd 1: a score s scales to 1/2 + (s - 1) / 8
    deep = [*head, ("c", -1.0), ("d", -5.0)]
    assert dbsf([deep], [1.0], window=2) == [
        ("a", pytest.approx(5 / 8)),
        ("b", pytest.approx(3 / 8)),
        ("c", pytest.approx(1 / 4)),
        ("d", 0.0),  # below mean - 4 sd: clipped
    ]
    assert dbsf([head], [1.0], window=2) == [
        ("a", pytest.approx(5 / 8)),
        ("b", pytest.approx(3 / 8)),
    ]


def test_dbsf_flat_heads_duplicates_and_weights():
    flat = [("x", 2.0), ("y", 2.0), ("z", 1.0), ("x", 0.5)]  # x again: counted once, at 2.0
    assert dbsf([flat], [1.0], window=2) == [("x", 1.0), ("y", 1.0), ("z", 0.0)]
    assert dbsf([[], [("w", 1.0)]], [0.5, 0.5]) == [("w", 0.5)]
    with pytest.raises(ValueError, match="2 rankings need as many weights, not 1"):
        dbsf([[], []], [1.0])
