"""``bench.context`` at an equal context in characters, not only an equal token budget.

- ``plain_pipeline``: the pipeline a LangChain user writes for Markdown (``MarkdownHeader
  TextSplitter`` h1–h3 + ``RecursiveCharacterTextSplitter(1000, 100)``, ``as_retriever()``'s
  k = 4 nearest by cosine): its context@k4 (every reference whole in one of the 4 chunks) and
  its mean characters a question (the chunks' source slices): the "plain pipeline" budget;
- ``greedy``: the harness's assembly (best first, each passage whole, while the total fits,
  at most ``MAX_PASSAGES``) with any size function: cl100k tokens, or ``len`` for characters;
- ``Sizes``: the mean context characters and cl100k tokens a question, per budget, reported
  beside each context@N (a row that wins by a longer context shows it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from bench.scoring import readings, score_context, scores

PLAIN_K = 4  # LangChain's as_retriever() default
CHARS = "{budget}ch"  # the column suffix of a budget in characters: context@2441ch


def char_budget(chars: float) -> str:
    """The budget key of a character budget (``context@<key>``)."""
    return CHARS.format(budget=round(chars))


def greedy(ranking: Sequence[int], sizes: Sequence[int], budget: int, limit: int) -> list[int]:
    """The indices taken, best first, each whole, while the total stays within ``budget``."""
    taken: list[int] = []
    total = 0
    for i in ranking:
        if len(taken) == limit:
            break
        if total + sizes[i] <= budget:
            taken.append(i)
            total += sizes[i]
    return taken


class Sizes:
    """Mean context characters and tokens a question, per budget key."""

    def __init__(self) -> None:
        self.seen: dict[str, list[tuple[int, int]]] = {}

    def add(self, key: str, texts: Sequence[str], count: Callable[[str], int]) -> None:
        self.seen.setdefault(key, []).append((sum(map(len, texts)), sum(count(t) for t in texts)))

    def row(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for key, values in self.seen.items():
            n = max(len(values), 1)
            out[f"chars@{key}"] = round(sum(c for c, _ in values) / n)
            out[f"tokens@{key}"] = round(sum(t for _, t in values) / n)
        return out


def plain_pipeline(
    corpus: dict[str, str], questions: list[Any], cache: Any, count: Callable[[str], int]
) -> tuple[dict[str, Any], float]:
    """The plain LangChain pipeline's row (context@k4 with its sizes) and its mean
    characters a question."""
    from bench.context import peer_splitter
    from ragingest.evaluate.chunking import split_corpus
    from ragingest.evaluate.retrieval import nearest

    _, splitter = peer_splitter("langchain")
    chunks = split_corpus(splitter, corpus)
    vectors = cache.embed([c.embed_text for c in chunks])
    top = nearest(vectors, cache.queries([q.text for q in questions]), PLAIN_K)
    per_q: dict[str, list[float]] = {}
    sizes = Sizes()
    for n, q in enumerate(questions):
        picked = [chunks[i] for i in top[n]]
        spans = [(c.corpus_id, c.start, c.end) for c in picked]
        score_context(per_q, f"k{PLAIN_K}", readings(q, corpus), spans)
        sizes.add(f"k{PLAIN_K}", [c.text for c in picked], count)
    row = scores(per_q) | sizes.row()
    return row, row[f"chars@k{PLAIN_K}"]
