"""Per principal, the ids of the chunks it may read, kept between reads while nothing is written.

Why: Chroma evaluates a ``where`` over every chunk it admits before it searches, so a read under
a caller's access filter costs in proportion to what the caller may read (~100 ms at 100 000
chunks for a fifth of them, bench/README.md "Filtered-query latency"), and so does a get of a
few ids with that ``where``. The ids each principal may read change only when the collection is
written, so they are read once per principal per write generation and a filtered read becomes
an unfiltered one followed by set lookups.

Contract: ``readable(source, gate, principals)`` is a ``ReadableIds`` for the access filter's
principal strings (``access.access_filter``'s ``$contains`` terms, ``*`` included): ``id in
readable`` holds exactly when the chunk was stored, as of the gate's write generation, with an
``access`` list naming one of them. The sets are kept per physical collection (the gate's key,
so every reader of the collection in this process shares them) and dropped as a whole when
``gate.generation()`` moved (every write group moves it, ``gate``); at most ``MAX_SETS``
principals per collection and ``MAX_COLLECTIONS`` collections, the least recently used go.
A caller still checks the chunks it returns on their own metadata (``guarded``): the sets
decide which ids are considered, never alone which text is shown.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ragingest.schema import ACCESS_KEY
from ragingest.vectorstore.seam import ChunkSource, Condition

if TYPE_CHECKING:
    from ragingest.vectorstore.gate import ReadGate

MAX_SETS = 512  # principals kept per collection
MAX_UNIONS = 64  # callers' unions of them kept per collection
MAX_COLLECTIONS = 16


class ReadableIds:
    """The ids any of some principals may read (a membership test), and how many there are."""

    def __init__(self, ids: frozenset[str], total: int) -> None:
        self.ids = ids
        self.total = total  # chunks in the collection at the same generation

    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id in self.ids

    def __len__(self) -> int:
        return len(self.ids)

    def share(self) -> float:
        """The part of the collection these principals may read (0 when it is empty)."""
        return len(self.ids) / self.total if self.total else 0.0


class _CollectionSets:
    """One physical collection's sets, valid for one write generation."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.generation = -1
        self.total = 0
        self.sets: OrderedDict[str, frozenset[str]] = OrderedDict()
        self.unions: OrderedDict[tuple[str, ...], ReadableIds] = OrderedDict()

    def readable(self, source: ChunkSource, generation: int, names: Sequence[str]) -> ReadableIds:
        key = tuple(names)
        with self.lock:
            if generation != self.generation:
                self.sets.clear()
                self.unions.clear()
                self.generation, self.total = generation, -1
            union = self.unions.get(key)
            if union is not None:
                self.unions.move_to_end(key)
                return union
            kept = {name: self.sets[name] for name in names if name in self.sets}
            for name in kept:
                self.sets.move_to_end(name)
            total = self.total
        if total < 0:
            total = source.count()
        read = {
            name: frozenset(source.chunk_ids(Condition(ACCESS_KEY, "$contains", name)))
            for name in names
            if name not in kept
        }
        union = ReadableIds(frozenset[str]().union(*kept.values(), *read.values()), total)
        with self.lock:
            if generation == self.generation:  # no write moved it while these were read
                self.total = total
                self.sets.update(read)
                self.unions[key] = union
                while len(self.sets) > MAX_SETS:
                    self.sets.popitem(last=False)
                while len(self.unions) > MAX_UNIONS:
                    self.unions.popitem(last=False)
        return union


_COLLECTIONS: OrderedDict[tuple[object, ...], _CollectionSets] = OrderedDict()
_GUARD = threading.Lock()


def readable(source: ChunkSource, gate: ReadGate, names: Sequence[str]) -> ReadableIds:
    """The ids that ``names`` (principal strings) may read in ``source`` (module docstring)."""
    key = (str(gate.persist_dir), gate.physical, gate.records_url, source.remote)
    with _GUARD:
        sets = _COLLECTIONS.get(key)
        if sets is None:
            sets = _COLLECTIONS[key] = _CollectionSets()
        _COLLECTIONS.move_to_end(key)
        while len(_COLLECTIONS) > MAX_COLLECTIONS:
            _COLLECTIONS.popitem(last=False)
    return sets.readable(source, gate.generation(), names)
