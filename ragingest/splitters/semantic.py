"""Semantic boundaries: where the topic changes in text that has no structure to cut by.

Boundaries from meaning rather than layout, for transcripts, chats and mail bodies: no
headings, few paragraphs. Used by ``HeadingFirstSplitter(fallback=SemanticBoundaries(...))``
at the paragraph stage: a section (or heading-less text) over the size budget is first cut at
topic shifts, then each part is packed as usual, so sizes are still held in the model's tokens
and tables/code stay whole.

Contract: ``SemanticBoundaries(embed).breakpoints(text, start, end, structure)`` returns the
offsets inside ``(start, end)`` where a new topic starts. The span is cut into sentence units
(sentence starts, line and paragraph breaks; never inside a table or code block); each unit is
embedded together with ``window`` units on each side (Kamradt's buffer); a breakpoint goes
before unit ``i + 1`` when the cosine distance between the windows of ``i`` and ``i + 1`` is
above the ``percentile``-th percentile of all distances of that span. Spans of fewer than
``min_units`` units get no breakpoints. ``embed`` maps a list of texts to L2-normalized
vectors (any sentence-transformers model; ``from_model`` builds one).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ragingest.splitters.packing import SENTENCE, candidates
from ragingest.splitters.structure import Structure

Embed = Callable[[list[str]], Any]

DEFAULT_PERCENTILE = 90.0


class SemanticBoundaries:
    """Topic-shift breakpoints for text without structure: cut where the embedding distance
    between neighbouring windows is over a percentile."""

    def __init__(
        self,
        embed: Embed,
        percentile: float = DEFAULT_PERCENTILE,
        window: int = 1,
        min_units: int = 4,
    ) -> None:
        if not 0 < percentile < 100:
            raise ValueError("percentile must be between 0 and 100")
        self.embed = embed
        self.percentile = percentile
        self.window = window
        self.min_units = min_units

    @classmethod
    def from_model(cls, model: str | None = None, **kwargs: Any) -> SemanticBoundaries:
        """Breakpoints embedded with the sentence-transformers model ``model`` (the default model
        for ``None``)."""
        from ragingest.models.embeddings import SentenceTransformerEmbeddings

        embeddings = SentenceTransformerEmbeddings(model)
        return cls(lambda texts: embeddings.embed_documents(texts), **kwargs)

    def units(self, text: str, start: int, end: int, structure: Structure) -> list[int]:
        """Start offsets of the sentence units of ``text[start:end]`` (the first is ``start``)."""
        cuts = candidates(text, start, end, structure)
        return [start, *sorted(p for p, strength in cuts.items() if strength >= SENTENCE)]

    def distances(self, text: str, starts: Sequence[int], end: int) -> np.ndarray:
        """Cosine distance between the windows around consecutive units."""
        bounds = [*starts, end]
        units = [text[a:b].strip() for a, b in itertools.pairwise(bounds)]
        w = self.window
        windows = [" ".join(units[max(0, i - w) : i + w + 1]) for i in range(len(units))]
        vectors = np.asarray(self.embed(windows), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        unit = vectors / np.where(norms == 0, 1, norms)
        return np.asarray(1.0 - np.sum(unit[:-1] * unit[1:], axis=1))

    def breakpoints(self, text: str, start: int, end: int, structure: Structure) -> list[int]:
        """Offsets in ``(start, end)`` where a new topic starts (unit starts whose distance is
        over the percentile); none for fewer than ``min_units`` units."""
        starts = self.units(text, start, end, structure)
        if len(starts) < self.min_units:
            return []
        distances = self.distances(text, starts, end)
        threshold = float(np.percentile(distances, self.percentile))
        return [starts[i + 1] for i, d in enumerate(distances) if d > threshold]
