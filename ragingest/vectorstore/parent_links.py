"""Which parent sections the chunks of a ``port.DenseIndex`` refer to (their ``parent_id``), read
a page at a time: what ``collection.Collection`` asks before it drops a parent section."""

from __future__ import annotations

from collections.abc import Sequence

from ragingest.vectorstore.port import DenseIndex
from ragingest.vectorstore.seam import Condition, StoredChunk

PAGE = 1000  # ids (or parent ids) per index read


def _parents_of(chunks: Sequence[StoredChunk]) -> set[str]:
    return {str(c.metadata["parent_id"]) for c in chunks if "parent_id" in c.metadata}


def parent_ids(index: DenseIndex, ids: Sequence[str] | None) -> set[str]:
    """The parent ids of the chunks ``ids`` (None: of every chunk)."""
    found: set[str] = set()
    if ids is not None:
        for i in range(0, len(ids), PAGE):
            found |= _parents_of(index.get(list(ids[i : i + PAGE])))
        return found
    offset = 0
    while True:
        page = index.get(None, None, limit=PAGE, offset=offset)
        found |= _parents_of(page)
        if len(page) < PAGE:
            return found
        offset += PAGE


def referenced_parents(index: DenseIndex, among: set[str]) -> set[str]:
    """Which of the parent ids ``among`` some chunk of ``index`` still refers to."""
    names = sorted(among)
    found: set[str] = set()
    for i in range(0, len(names), PAGE):
        where = Condition("parent_id", "$in", tuple(names[i : i + PAGE]))
        offset = 0
        while True:
            page = index.get(None, where, limit=PAGE, offset=offset)
            found |= _parents_of(page)
            if len(page) < PAGE:
                break
            offset += PAGE
    return found
