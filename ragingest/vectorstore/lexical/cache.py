"""What one lexical index's searches keep in memory: term row counts and per-term BM25 postings,
shared by the threads of a process, and the exact top-n summed from those postings.

Why by hand: FTS5's ``bm25()`` of an ``OR`` query is the sum, over its phrases in query order,
of each phrase's own BM25 term (``idf · tf · (k1 + 1) / (tf + k1 · (1 - b + b · dl / avgdl))``,
with ``score = 0.0`` then ``+=`` per phrase), so the single-term scores FTS5 gives, added in
the same order from 0.0, are the ``OR`` query's score to the last bit. FTS5 computes that
score for every row holding any term on every query (40 000-115 000 rows for an English
question over 100 000 chunks); summing kept arrays costs a few milliseconds.

Contract:

- ``TermCache``: for one index version (``Version``: the file's own random id and a number
  its writers raise in each write transaction, read in the same snapshot as the counts and
  postings), the row count of the index, rows per term and ``Postings`` per term. A lookup
  or a store for another version than the kept one finds nothing and stores nothing; a newer
  number or another file (one put in the old one's place) empties the cache first, an older
  number (a reader still on an older snapshot) leaves it alone. ``version`` None
  (an index written before versions existed) caches nothing. Postings are kept least recently
  used first out, at most ``POSTINGS_BUDGET`` entries in all (16 bytes each: at most ~128 MB);
  row counts for at most ``TERMS_BUDGET`` terms. One lock guards the dictionaries, never a
  query: two threads missing the same term both read it and keep one.
- ``create_version``, ``raise_version``, ``read_version``: the index file's version, one
  row in ``lexical_version`` (the number and the file's id, drawn at its first write), raised
  in every write transaction (``read_version`` is None for a file written before versions).
- ``best(postings, limit, offset)``: ``(rowid, summed score)`` for the ``offset + limit``
  best rows and every row tied with the last of them, unordered: the caller orders them by
  score, then chunk id (FTS5's ``ORDER BY``), and slices.
"""

from __future__ import annotations

import sqlite3
import threading
import uuid
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

POSTINGS_BUDGET = 8_000_000  # postings kept per index (rowid int64 + score float64: ~128 MB)
TERMS_BUDGET = 100_000  # terms whose row counts are kept per index
VERSION_TABLE = "lexical_version"
Version = tuple[str, int]  # the file's id, the write count


@dataclass(frozen=True)
class Postings:
    """The rows holding one term and the term's BM25 in each (``-bm25`` of the term alone,
    higher is better)."""

    rows: np.ndarray  # int64 FTS5 rowids
    scores: np.ndarray  # float64


class TermCache:
    """Row counts and postings of one lexical index at one version (module docstring)."""

    def __init__(self, budget: int = POSTINGS_BUDGET) -> None:
        self.budget = budget
        self._lock = threading.Lock()
        self._version: Version | None = None
        self._total: int | None = None
        self._counts: dict[str, int] = {}
        self._postings: OrderedDict[str, Postings] = OrderedDict()
        self._size = 0

    def _at(self, version: Version | None) -> bool:
        """Under the lock: whether ``version`` is the kept one, after moving to it when newer
        or of another file."""
        if version is None:
            return False
        kept = self._version
        if kept is None or version[0] != kept[0] or version[1] > kept[1]:
            self._version, self._total, self._size = version, None, 0
            self._counts, self._postings = {}, OrderedDict()
        return version == self._version

    def total(self, version: Version | None) -> int | None:
        with self._lock:
            return self._total if self._at(version) else None

    def counts(self, version: Version | None, terms: Sequence[str]) -> dict[str, int]:
        """The kept row counts among ``terms``."""
        with self._lock:
            if not self._at(version):
                return {}
            return {term: self._counts[term] for term in terms if term in self._counts}

    def keep_counts(self, version: Version | None, total: int, counts: dict[str, int]) -> None:
        with self._lock:
            if not self._at(version):
                return
            if len(self._counts) + len(counts) > TERMS_BUDGET:
                self._counts = {}
            self._total = total
            self._counts.update(counts)

    def postings(self, version: Version | None, term: str) -> Postings | None:
        with self._lock:
            if not self._at(version):
                return None
            found = self._postings.get(term)
            if found is not None:
                self._postings.move_to_end(term)
            return found

    def keep_postings(self, version: Version | None, term: str, postings: Postings) -> None:
        size = len(postings.rows)
        with self._lock:
            if not self._at(version) or term in self._postings or size > self.budget:
                return
            while self._size + size > self.budget:
                _, old = self._postings.popitem(last=False)
                self._size -= len(old.rows)
            self._postings[term] = postings
            self._size += size


def best(postings: Sequence[Postings], limit: int, offset: int) -> list[tuple[int, float]]:
    """The top rows by summed score (module docstring). Each row's sum is taken over the
    terms in the order given, from 0.0 (``np.bincount`` adds its weights in input order), as
    FTS5 adds the phrases of an ``OR`` query."""
    rows = np.concatenate([p.rows for p in postings])
    scores = np.concatenate([p.scores for p in postings])
    if not len(rows):
        return []
    top = int(rows.max()) + 1
    if top <= 4 * len(rows) + 1_000_000:  # a dense table over the rowids is the cheaper
        sums = np.bincount(rows, weights=scores, minlength=top)
        held = np.zeros(top, dtype=bool)
        held[rows] = True
        matched = np.flatnonzero(held)
        totals = sums[matched]
    else:
        matched, inverse = np.unique(rows, return_inverse=True)
        totals = np.bincount(inverse, weights=scores)
    wanted = offset + limit
    if len(matched) > wanted:
        threshold = np.partition(totals, len(totals) - wanted)[len(totals) - wanted]
        keep = totals >= threshold
        matched, totals = matched[keep], totals[keep]
    return list(zip(matched.tolist(), totals.tolist(), strict=True))


def create_version(db: sqlite3.Connection) -> None:
    db.execute(
        f"CREATE TABLE IF NOT EXISTS {VERSION_TABLE} (version INTEGER NOT NULL, file TEXT NOT NULL)"
    )


def raise_version(db: sqlite3.Connection) -> None:
    """Raise the file's version, in the transaction this write opens."""
    if db.execute(f"UPDATE {VERSION_TABLE} SET version = version + 1").rowcount == 0:
        db.execute(f"INSERT INTO {VERSION_TABLE} VALUES (1, ?)", (uuid.uuid4().hex,))


def read_version(db: sqlite3.Connection) -> Version | None:
    """The file's version in the snapshot ``db`` reads; None for a file written before
    versions (nothing is cached for it)."""
    try:
        row = db.execute(f"SELECT file, version FROM {VERSION_TABLE}").fetchone()
    except sqlite3.OperationalError:  # no such table
        return None
    return None if row is None else (str(row[0]), int(row[1]))
