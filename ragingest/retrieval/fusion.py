"""Fusing ranked lists (the dense and the BM25 ranking of one query) into one ranking.

``fuse(dense, lexical, fusion, dense_weight, rrf_k)``: the dense and BM25 lists of one query
(``(id, score)``, best first) as one ranking by the chosen fusion (``check_fusion`` tells a
bad choice); ``search.rank_chunks`` and ``ragingest evaluate`` both fuse through it.

Both fusions take rankings best first and return ``(id, fused score)`` best first; an id
twice in one ranking counts once, at its best rank; ties go to the better rank in the first
ranking, then the next (an id missing from a ranking ranks after every id in it). Usable on
any ids (``ragingest evaluate`` fuses chunk indices with them too).

- ``reciprocal_rank_fusion``: ``score = sum(1 / (rrf_k + rank))`` (Cormack et al. 2009,
  ``rrf_k`` = 60): ranks only, so a list's confident first hit counts like a close one.
- ``distribution_score_fusion`` (DBSF, as Qdrant names it): ``score = sum(weight * scaled
  score)``; each list's scores are scaled by the mean and standard deviation of its first
  ``window`` hits (all of them when it has fewer): mean - 4 sd -> 0, mean + 4 sd -> 1, clipped
  to [0, 1]; 0 where the id is not in it; a list whose head is flat gives 1 to the hits equal
  to it and 0 to the rest.
  Scores count, so a hit far above the rest of its list outranks a run of near-ties, and a hit
  found deep in both lists still scores in both. The scale depends only on the first
  ``window`` hits, so those hits' scores do not change however deep the lists are read.

LangChain's ``EnsembleRetriever`` offers weighted RRF only and works on whole retrievers, not on
one store's scored lists, so both are written here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ragingest.defaults import DENSE_WEIGHT, FUSION, FUSIONS, Fusion

RRF_K = 60
SCALE_OVER = 20  # distribution-based fusion: the head of each list that sets its scale
# the scale spans mean +- this many standard deviations: 4 left the highest minimum margin
# over the plain splitters of 2, 3 (Qdrant's), 4 and 5 (bench/README.md)
SCALE_SPREADS = 4


def _best_ranks(rankings: Sequence[Sequence[str]]) -> dict[str, list[float]]:
    """Per id, its rank (from 1) in each ranking, ``inf`` where it is missing."""
    ranks: dict[str, list[float]] = {}
    for position, ranking in enumerate(rankings):
        for rank, key in enumerate(ranking, 1):
            best = ranks.setdefault(key, [math.inf] * len(rankings))
            best[position] = min(best[position], rank)
    return ranks


def _ordered(scores: dict[str, float], ranks: dict[str, list[float]]) -> list[tuple[str, float]]:
    return sorted(scores.items(), key=lambda item: (-item[1], *ranks[item[0]]))


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]], rrf_k: int = RRF_K
) -> list[tuple[str, float]]:
    """Fuse rankings (ids, best first) by reciprocal rank (module docstring)."""
    ranks = _best_ranks(rankings)
    scores = {
        key: sum(1.0 / (rrf_k + rank) for rank in best if rank != math.inf)
        for key, best in ranks.items()
    }
    return _ordered(scores, ranks)


def distribution_score_fusion(
    rankings: Sequence[Sequence[tuple[str, float]]],
    weights: Sequence[float],
    window: int = SCALE_OVER,
) -> list[tuple[str, float]]:
    """Fuse scored rankings (``(id, score)``, best first, higher is better) by a weighted sum
    of their scores scaled by each list's distribution, one weight per ranking (module
    docstring)."""
    if len(weights) != len(rankings):
        raise ValueError(f"{len(rankings)} rankings need as many weights, not {len(weights)}")
    ranks = _best_ranks([[key for key, _ in ranking] for ranking in rankings])
    scores = dict.fromkeys(ranks, 0.0)
    for ranking, weight in zip(rankings, weights, strict=True):
        head = [score for _, score in ranking[:window]]
        mean = sum(head) / max(len(head), 1)
        spread = math.sqrt(sum((score - mean) ** 2 for score in head) / max(len(head), 1))
        seen: set[str] = set()
        for key, score in ranking:
            if key in seen:
                continue
            seen.add(key)
            if spread > 0:
                scaled = 0.5 + (score - mean) / (2 * SCALE_SPREADS * spread)
            else:
                scaled = 1.0 if score >= mean else 0.0
            scores[key] += weight * min(max(scaled, 0.0), 1.0)
    return _ordered(scores, ranks)


def check_fusion(fusion: str, dense_weight: float) -> None:
    """ValueError unless ``fusion`` is one of ``FUSIONS`` and ``dense_weight`` within [0, 1]."""
    if fusion not in FUSIONS:
        raise ValueError(f"fusion must be one of {', '.join(FUSIONS)}, not {fusion!r}")
    if not 0.0 <= dense_weight <= 1.0:
        raise ValueError(f"dense_weight must be between 0 and 1, not {dense_weight!r}")


def fuse(
    dense: Sequence[tuple[str, float]],
    lexical: Sequence[tuple[str, float]],
    fusion: Fusion = FUSION,
    dense_weight: float = DENSE_WEIGHT,
    rrf_k: int = RRF_K,
) -> list[tuple[str, float]]:
    """The dense and BM25 lists as one ranking: ``distribution_score_fusion`` with weights
    ``dense_weight`` and ``1 - dense_weight`` ("dbsf"), or ``reciprocal_rank_fusion`` of their
    orders ("rrf")."""
    if fusion == "dbsf":
        return distribution_score_fusion([dense, lexical], [dense_weight, 1.0 - dense_weight])
    return reciprocal_rank_fusion([[key for key, _ in dense], [key for key, _ in lexical]], rrf_k)
