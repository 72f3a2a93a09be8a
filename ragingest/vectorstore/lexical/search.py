"""One search of a lexical index (``lexical.LexicalIndex.search``) in the snapshot its caller
opened: the terms' row counts and postings from the ``TermCache`` or from FTS5, the best rows
by summed BM25 (``lexical_cache.best``), mapped to Chroma ids. The result is exactly what
FTS5's ``OR`` query over the chosen terms returns (ids, order, scores); a row without its id
falls back to that query itself.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ragingest.vectorstore.lexical.cache import Postings, TermCache, Version, best, read_version
from ragingest.vectorstore.lexical.terms import ranking_terms

_ID_BATCH = 500


@dataclass(frozen=True)
class FtsTables:
    """The tables of one collection's index: the FTS5 text, rowid -> Chroma id, and the
    ``fts5vocab`` view (a temp table) of the text's terms."""

    text: str
    ids: str
    vocab: str


def search_snapshot(
    db: sqlite3.Connection,
    tables: FtsTables,
    cache: TermCache,
    unique: Sequence[str],
    limit: int,
    offset: int,
) -> list[tuple[str, float]]:
    """The ``limit`` best chunks for the query terms ``unique`` after the first ``offset``, as
    ``(chroma id, score)``, best first, read in ``db``'s open transaction."""
    version = read_version(db)
    frequency, total = _frequencies(db, tables, cache, unique, version)
    chosen = ranking_terms(unique, frequency, total)
    if not chosen:
        return []
    postings = [_postings(db, tables, cache, term, version) for term in chosen]
    ranked = _ranked(db, tables, best(postings, limit, offset))
    if ranked is None:  # a row without its id (never written so): FTS5's own join
        return _search_joined(db, tables, chosen, limit, offset)
    return ranked[offset : offset + limit]


def _ranked(
    db: sqlite3.Connection, tables: FtsTables, scored: list[tuple[int, float]]
) -> list[tuple[str, float]] | None:
    """``scored`` rows as ``(chroma id, score)`` ordered as FTS5's ``ORDER BY -score,
    id``; None when a row has no id."""
    by_row: dict[int, str] = {}
    for i in range(0, len(scored), _ID_BATCH):
        batch = [row for row, _ in scored[i : i + _ID_BATCH]]
        marks = ",".join("?" * len(batch))
        by_row.update(db.execute(f"SELECT n, id FROM {tables.ids} WHERE n IN ({marks})", batch))
    if len(by_row) < len(scored):
        return None
    return sorted(((by_row[row], score) for row, score in scored), key=_best_first)


def _search_joined(
    db: sqlite3.Connection, tables: FtsTables, chosen: Sequence[str], limit: int, offset: int
) -> list[tuple[str, float]]:
    rows = db.execute(
        f"SELECT i.id, bm25({tables.text}) AS s FROM {tables.text} "
        f"JOIN {tables.ids} AS i ON i.n = {tables.text}.rowid "
        f"WHERE {tables.text} MATCH ? ORDER BY s, i.id LIMIT ? OFFSET ?",
        (" OR ".join(map(_phrase, chosen)), limit, offset),
    ).fetchall()
    return [(chunk_id, -float(score)) for chunk_id, score in rows]


def _postings(
    db: sqlite3.Connection, tables: FtsTables, cache: TermCache, term: str, version: Version | None
) -> Postings:
    """The rows holding ``term`` and its BM25 in each, from the cache or from FTS5."""
    found = cache.postings(version, term)
    if found is None:
        rows = db.execute(
            f"SELECT rowid, bm25({tables.text}) FROM {tables.text} WHERE {tables.text} MATCH ?",
            (_phrase(term),),
        ).fetchall()
        found = Postings(
            np.fromiter((row for row, _ in rows), dtype=np.int64, count=len(rows)),
            -np.fromiter((score for _, score in rows), dtype=np.float64, count=len(rows)),
        )
        cache.keep_postings(version, term, found)
    return found


def _frequencies(
    db: sqlite3.Connection,
    tables: FtsTables,
    cache: TermCache,
    unique: Sequence[str],
    version: Version | None,
) -> tuple[dict[str, int], int]:
    """Rows per term of ``unique`` (FTS5's vocabulary table, which reads each term's
    postings) and the row count, kept in the cache for ``version``."""
    total = cache.total(version)
    if total is None:
        total = int(db.execute(f"SELECT count(*) FROM {tables.ids}").fetchone()[0])
    counts = cache.counts(version, unique)
    wanted = [term for term in unique if term not in counts]
    if wanted:
        db.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{tables.vocab} "
            f"USING fts5vocab(main, {tables.text}, 'row')"
        )
        marks = ",".join("?" * len(wanted))
        found = db.execute(
            f"SELECT term, doc FROM temp.{tables.vocab} WHERE term IN ({marks})", wanted
        )
        new = dict.fromkeys(wanted, 0) | {term: int(rows) for term, rows in found}
        cache.keep_counts(version, total, new)
        counts |= new
    return counts, total


def _phrase(term: str) -> str:
    return f'"{term}"'


def _best_first(item: tuple[str, float]) -> tuple[float, str]:
    return -item[1], item[0]
