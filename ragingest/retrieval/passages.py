"""Passages: the spans a retriever returns, and the choice of the best ``k`` without repeats.

Never fill the top k with copies of the same text (overlap makes neighbours look alike).
``select`` is that choice alone; ``ragingest evaluate`` uses it too. ``span_of``
turns a ranked chunk into a candidate, ``as_document`` a chosen one into what the retriever
returns.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from langchain_core.documents import Document

if TYPE_CHECKING:
    from ragingest.retrieval.search import ChunkHit

_TOKEN = re.compile(r"\w+")
_RETURNED_SCORES = ("dense_rank", "lexical_rank", "dense_score", "lexical_score")


@dataclass
class Span:
    """A candidate passage: a chunk or a parent, with its exact span in its document.

    ``chunk_ids`` are the Chroma ids of the chunks that matched (best first); ``score`` is the
    best chunk's ranking score (cosine, or the fused score in hybrid search); ``dense_rank`` /
    ``lexical_rank`` the best 1-based rank of its chunks in each list (None: not in it).
    """

    source: str
    start: int
    end: int
    text: str
    metadata: dict[str, Any]
    score: float
    chunk_ids: list[str] = field(default_factory=list)
    expanded: bool = False
    dense_rank: int | None = None
    lexical_rank: int | None = None
    dense_score: float | None = None
    lexical_score: float | None = None

    def overlaps(self, other: Span) -> bool:
        return self.source == other.source and self.start < other.end and other.start < self.end

    def absorb(self, other: Span) -> None:
        """Grow to the union of both spans; both texts are exact slices of one document."""
        if other.start < self.start:
            self.text = other.text[: self.start - other.start] + self.text
            self.start = other.start
        if other.end > self.end:
            self.text = self.text + other.text[len(other.text) - (other.end - self.end) :]
            self.end = other.end
        self.chunk_ids.extend(i for i in other.chunk_ids if i not in self.chunk_ids)
        self.expanded = self.expanded or other.expanded
        self.dense_rank = _best(self.dense_rank, other.dense_rank)
        self.lexical_rank = _best(self.lexical_rank, other.lexical_rank)
        self.dense_score = _best(self.dense_score, other.dense_score, high=True)
        self.lexical_score = _best(self.lexical_score, other.lexical_score, high=True)


def _best(a: Any, b: Any, high: bool = False) -> Any:
    if a is None or b is None:
        return b if a is None else a
    return max(a, b) if high else min(a, b)


def select(candidates: list[Span], k: int, dedup: bool = True) -> list[Span]:
    """The first ``k`` candidates, best first; with ``dedup``, a candidate overlapping a chosen
    one (same document) is merged into it, and one whose text a chosen one already holds (or
    nearly repeats: another copy of the file) is dropped. A merge that makes chosen passages
    overlap joins them at once, and the choice goes on: ``k`` come back whenever the
    candidates hold ``k`` distinct passages."""
    chosen: list[Span] = []
    for candidate in candidates:
        if len(chosen) == k:
            break
        if dedup:
            same = next((c for c in chosen if c.overlaps(candidate)), None)
            if same is not None:
                same.absorb(candidate)  # it may now reach another chosen passage
                chosen = _merge_touching(chosen)
                continue
            if any(repeats(candidate.text, c.text) for c in chosen):
                continue
        chosen.append(candidate)
    return _merge_touching(chosen) if dedup else chosen


def near_identical(a: str, b: str, threshold: float = 0.9) -> bool:
    """Word-trigram Jaccard similarity at or above ``threshold`` (identical text included)."""
    if not a.strip() or not b.strip():
        return False
    if a == b:
        return True
    sa, sb = _shingles(a), _shingles(b)
    if not sa or not sb or min(len(sa), len(sb)) < threshold * max(len(sa), len(sb)):
        return False  # Jaccard <= min / max: the sizes alone rule it out
    shared = len(sa & sb)
    return shared / (len(sa) + len(sb) - shared) >= threshold


def repeats(text: str, chosen: str) -> bool:
    """``text`` adds nothing to ``chosen``: it is inside it, or nearly the same words."""
    body = text.strip()
    return bool(body) and (body in chosen or near_identical(text, chosen))


@functools.lru_cache(maxsize=256)  # one query compares each candidate with every chosen one
def _shingles(text: str) -> frozenset[tuple[str, ...]]:
    words = _TOKEN.findall(text.lower())
    if len(words) < 3:  # one shingle of the words there are
        return frozenset([tuple(words)])
    return frozenset(zip(words, words[1:], words[2:], strict=False))


def _merge_touching(spans: list[Span]) -> list[Span]:
    out: list[Span] = []
    for span in spans:
        same = next((s for s in out if s.overlaps(span)), None)
        if same is None:
            out.append(span)
        else:
            same.absorb(span)
    return out


def span_of(hit: ChunkHit) -> Span:
    """A ranked chunk as a candidate passage: its own span, scores and ranks."""
    doc = hit.chunk
    meta = dict(doc.metadata)
    return Span(
        source=str(meta.get("doc_id") or meta.get("source", "")),
        start=int(meta.get("start_index", 0)),
        end=int(meta.get("end_index", len(doc.page_content))),
        text=doc.page_content,
        metadata=meta,
        score=float(hit.score),
        chunk_ids=[str(doc.id)],
        dense_rank=hit.dense_rank,
        lexical_rank=hit.lexical_rank,
        dense_score=hit.dense_score,
        lexical_score=hit.lexical_score,
    )


def as_document(span: Span) -> Document:
    """A chosen passage as the retriever returns it: the stored metadata (none of the keys
    starting with ``_``), the span, the score, ranks and scores where it had them, the chunk
    ids and ``expanded``; a parent drops the chunk-only keys. ``id``: its best chunk's."""
    meta = {k: v for k, v in span.metadata.items() if not k.startswith("_")}
    meta.update(
        start_index=span.start,
        end_index=span.end,
        score=round(span.score, 4),
        chunk_ids=list(span.chunk_ids),
        expanded=span.expanded,
    )
    for key in _RETURNED_SCORES:
        value = getattr(span, key)
        if value is not None:
            meta[key] = round(value, 4) if isinstance(value, float) else value
    if span.expanded:
        for key in ("chunk_index", "token_count", "content_hash", "h3"):
            meta.pop(key, None)
    best = span.chunk_ids[0] if span.chunk_ids else None
    return Document(id=best, page_content=span.text, metadata=meta)
