"""``where`` in every accepted form -> one Chroma filter; reciprocal rank fusion (no model)."""

from __future__ import annotations

import pytest

from ragingest.retrieval.filters import chroma_where
from ragingest.retrieval.search import reciprocal_rank_fusion


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
