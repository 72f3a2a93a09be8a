"""Vectors of short texts kept in memory across queries (a second stage's units, headings).

Written by hand: LangChain's ``CacheBackedEmbeddings`` caches in a byte store with a key per
text, more than a bounded in-process memo of a few thousand vectors needs.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
from langchain_core.embeddings import Embeddings


def remembered(
    memo: OrderedDict[str, np.ndarray], embeddings: Embeddings, texts: list[str], limit: int
) -> np.ndarray:
    """The vectors of ``texts`` (one row each), those in ``memo`` from it, the others
    embedded as documents and added; ``memo`` keeps the ``limit`` last used."""
    missing = [t for t in dict.fromkeys(texts) if t not in memo]
    if missing:
        for text, vector in zip(missing, embeddings.embed_documents(missing), strict=True):
            memo[text] = np.asarray(vector, dtype=np.float32)
    for text in texts:
        memo.move_to_end(text)
    while len(memo) > limit:
        memo.popitem(last=False)
    return np.stack([memo[t] for t in texts])
