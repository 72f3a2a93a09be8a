"""A second stage for an answer that opens the next section (``NextSection``, a LangChain
``BaseDocumentCompressor``).

A page often states a problem under one heading and the fix — an exact option name — under
the next. The query matches the problem's section; the next section's first chunk, which
holds the fix, ranks behind passages of other sections that fill the budget. ``NextSection``
looks at the best ``read`` passages; for one that ends its section (at most ``tail``
characters of the section after it: the last chunk, or one more short one), it finds among
the candidates the opening of the section right after (the same file, the next section's
first chunk, under another heading) and moves it up right behind that passage, but only when
the query points at it:

- the query is at least as near the next section's heading as the passage's own heading
  (``embeddings``, the collection's model, reads the two headings: the last part of each
  ``section_path``); and
- the opening's cosine to the query (``dense_score``, what the search already computed) is
  within ``margin`` of the passage's.

Contract: ``compress_documents(passages, query)`` returns the same passages, reordered;
nothing is added, dropped or changed, so permissions and filters stay those of the search
that found them (only the candidates are read, never the store). A passage without the
section keys (``parent_start``/``parent_end``/``start_index``/``end_index``) or without
``dense_score`` (a lexical-only hit) is neither moved nor moves another. Cost: nothing for a
query where no candidate opens the next section of a best passage; otherwise one query
embedding and the headings not seen before (kept in memory, ``HEADINGS`` of them).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
from langchain_core.callbacks import Callbacks
from langchain_core.documents import BaseDocumentCompressor, Document
from langchain_core.embeddings import Embeddings
from pydantic import ConfigDict, PrivateAttr

from ragingest.retrieval.vector_memo import remembered

GAP = 8  # characters between two sections of a file: the blank lines a heading starts after
HEADINGS = 4096  # heading vectors kept in memory


def _source(doc: Document) -> str:
    return str(doc.metadata.get("doc_id") or doc.metadata.get("source", ""))


def _cosine(doc: Document) -> float | None:
    value = doc.metadata.get("dense_score")
    return None if value is None else float(value)


def opening_after(
    passages: Sequence[Document], at: int, tail: int = 0, heading: bool = True
) -> int | None:
    """The rank of the candidate that opens the section after ``passages[at]``'s: the same
    file, its section starting where ``passages[at]``'s ends (at most ``GAP`` characters
    between), its first chunk (it starts where its section starts), under another heading
    (``section_path``) when ``heading``; None when ``passages[at]`` ends more than ``tail``
    characters before its section's end, or no candidate opens the next section."""
    anchor = passages[at].metadata
    if "parent_end" not in anchor or "end_index" not in anchor:
        return None
    section_end = int(anchor["parent_end"])
    if section_end - int(anchor["end_index"]) > tail:
        return None
    source = _source(passages[at])
    for j, doc in enumerate(passages):
        meta = doc.metadata
        if j == at or _source(doc) != source or "parent_start" not in meta:
            continue
        opens = int(meta["parent_start"])
        if not 0 <= opens - section_end <= GAP or meta.get("start_index") != opens:
            continue
        if heading and meta.get("section_path") == anchor.get("section_path"):
            return None  # a section cut for its size, not the next heading's
        return j
    return None


class NextSection(BaseDocumentCompressor):
    """The opening of the section after a best passage's section, moved up behind it when
    the query points at it (module docstring)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    embeddings: Embeddings | None = None  # None: the headings are not compared
    read: int = 3  # the best passages whose next section's opening is looked for
    tail: int = 800  # characters of its section that may follow a passage
    margin: float | None = 0.02  # the opening's cosine at least the passage's less this
    # (None: not compared)
    _vectors: OrderedDict[str, np.ndarray] = PrivateAttr(default_factory=OrderedDict)

    def compress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> Sequence[Document]:
        """The passages, each opening the query points at moved up behind its passage."""
        out = list(documents)
        query_vector: list[np.ndarray] = []  # embedded when first needed
        at = 0
        for _ in range(self.read):
            if at >= len(out):
                break
            j = opening_after(out, at, self.tail)
            if (
                j is not None
                and j > at + 1
                and self._points_at(out[j], out[at], query, query_vector)
            ):
                out.insert(at + 1, out.pop(j))
                at += 1  # the moved opening is not a best passage itself
            at += 1
        return out

    def _points_at(
        self, opening: Document, anchor: Document, query: str, query_vector: list[np.ndarray]
    ) -> bool:
        """The two gates of the module docstring; ``query_vector`` holds the query's vector
        once a heading comparison has embedded it (one a query)."""
        if self.margin is not None:
            near, far = _cosine(opening), _cosine(anchor)
            if near is None or far is None or near < far - self.margin:
                return False
        if self.embeddings is None:
            return True
        if not query_vector:
            query_vector.append(np.asarray(self.embeddings.embed_query(query), dtype=np.float32))
        texts = [_heading(opening), _heading(anchor)]
        near, far = remembered(self._vectors, self.embeddings, texts, HEADINGS) @ query_vector[0]
        return bool(near >= far)


def _heading(doc: Document) -> str:
    """A passage's own heading: the last part of its ``section_path``."""
    return str(doc.metadata.get("section_path") or "").rsplit(" > ", 1)[-1]
