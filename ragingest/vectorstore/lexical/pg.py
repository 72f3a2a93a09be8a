"""The lexical index in PostgreSQL: the same terms and the same BM25 as the SQLite FTS5 index
(``vectorstore.lexical``), in the records database, so every machine reading the collection
shares one index.

Contract: ``PgLexicalIndex(engine, collection)`` has ``LexicalIndex``'s methods (``add`` an
upsert by Chroma id, ``delete``, ``drop``, ``ids``, ``count``, ``search`` → ``(id, score)``
best first, higher is better). One table ``ragingest_lexical`` holds every physical
collection's rows: a ``tsvector`` column with a GIN index (matching) and the term count
(BM25's document length). A search matches ``lexical.ranking_terms`` of the query, as FTS5's
does, from the same row counts.

Why the tsvector is built from ``lexical.terms`` and not by ``to_tsvector``: the analyzer must
be one function for both backends (``lexical.terms``, whatever stemmer or lemmatizer it uses),
and PostgreSQL's text-search parser would split the joined codes it makes (``e_07``) at the
underscore. So each term becomes a lexeme as it is (a tsvector literal, no parser), with one
position per occurrence: the position count is the term frequency (PostgreSQL keeps at most 256
positions per lexeme, so a term repeated more often in one chunk counts 256 times).

Why BM25 in SQL rather than ``ts_rank_cd``: the score is FTS5's ``bm25()`` (Okapi BM25, k1 1.2,
b 0.75, idf ``ln((N - n + 0.5) / (n + 0.5))`` floored at 1e-6, the same ties by id), so both
backends rank alike (measured in bench/README.md); ``ts_rank_cd`` weighs cover density and has
no idf.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy import (
    Column,
    Index,
    Integer,
    MetaData,
    Table,
    Text,
    delete,
    func,
    select,
    text,
    update,
)
from sqlalchemy.dialects.postgresql import TSVECTOR, insert
from sqlalchemy.engine import Engine

from ragingest.vectorstore.lexical.terms import query_terms, ranking_terms, terms
from ragingest.vectorstore.records.database import chunks_of, create_tables

LEXICAL_METADATA = MetaData()
LEXICAL = Table(
    "ragingest_lexical",
    LEXICAL_METADATA,
    Column("collection", Text, primary_key=True),
    Column("id", Text, primary_key=True),
    Column("terms", TSVECTOR, nullable=False),
    Column("length", Integer, nullable=False),
    Index("ragingest_lexical_terms", "terms", postgresql_using="gin"),
)
MAX_POSITIONS = 256  # PostgreSQL's limit of positions per lexeme

# one pass over the matching rows (``hits``: of each, only the query's lexemes, picked in C by
# setweight + ts_filter rather than unnesting every lexeme): a term's document frequency is
# the number of its hit rows, as every row holds a lexeme once; MATERIALIZED: each part once
_BM25 = text(
    """
WITH stats AS MATERIALIZED (
    SELECT count(*)::float8 AS n, coalesce(avg(length), 0)::float8 AS avgdl
    FROM ragingest_lexical WHERE collection = :collection),
hits AS MATERIALIZED (
    SELECT l.id, l.length, u.lexeme, cardinality(u.positions)::float8 AS tf
    FROM ragingest_lexical AS l CROSS JOIN LATERAL
        unnest(ts_filter(setweight(l.terms, 'A', CAST(:terms AS text[])), '{a}')) AS u
    WHERE l.collection = :collection AND l.terms @@ CAST(:query AS tsquery)),
idf AS MATERIALIZED (
    SELECT h.lexeme, greatest(ln((stats.n - count(*) + 0.5) / (count(*) + 0.5)), 1e-6) AS w
    FROM hits AS h CROSS JOIN stats GROUP BY h.lexeme, stats.n)
SELECT h.id, sum(idf.w * h.tf * 2.2 / (h.tf + 1.2 * (0.25 + 0.75 * h.length / stats.avgdl)))
       AS score
FROM hits AS h JOIN idf ON idf.lexeme = h.lexeme CROSS JOIN stats
GROUP BY h.id ORDER BY score DESC, h.id LIMIT :limit OFFSET :offset
"""
)


# rows per query term (GIN lookups) and the collection's row count: ``lexical.ranking_terms``
_FREQUENCIES = text(
    """
SELECT q.term, (SELECT count(*) FROM ragingest_lexical AS l
                WHERE l.collection = :collection AND l.terms @@ CAST(q.quoted AS tsquery))
FROM unnest(CAST(:terms AS text[]), CAST(:quoted AS text[])) AS q(term, quoted)
UNION ALL
SELECT NULL, count(*) FROM ragingest_lexical WHERE collection = :collection
"""
)


def _quote(term: str) -> str:
    """A lexeme in tsvector/tsquery literal syntax."""
    return "'" + term.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector_literal(words: Sequence[str]) -> str:
    """The tsvector of ``words`` (index terms, in order): each distinct term with one position
    per occurrence, up to ``MAX_POSITIONS``."""
    counts: dict[str, int] = {}
    for word in words:
        counts[word] = counts.get(word, 0) + 1
    return " ".join(
        f"{_quote(word)}:{','.join(str(p) for p in range(1, min(n, MAX_POSITIONS) + 1))}"
        for word, n in counts.items()
    )


class PgLexicalIndex:
    """BM25 over one physical collection's chunks in PostgreSQL (see the module docstring)."""

    def __init__(self, engine: Engine, collection: str) -> None:
        self.engine = engine
        self.collection = collection
        create_tables(engine, LEXICAL_METADATA)

    def add(self, ids: Sequence[str], texts: Sequence[str]) -> None:
        """Index ``texts`` under their Chroma ``ids``, replacing what those ids held."""
        rows = {}
        for chunk_id, body in zip(ids, texts, strict=True):
            words = terms(body)
            rows[chunk_id] = {
                "collection": self.collection,
                "id": chunk_id,
                "terms": tsvector_literal(words),
                "length": len(words),
            }
        if not rows:
            return
        statement = insert(LEXICAL)
        statement = statement.on_conflict_do_update(
            index_elements=["collection", "id"],
            set_={"terms": statement.excluded.terms, "length": statement.excluded.length},
        )
        with self.engine.begin() as connection:
            for part in chunks_of(list(rows.values())):
                connection.execute(statement, list(part))

    def delete(self, ids: Iterable[str]) -> None:
        ids = list(ids)
        if not ids:
            return
        with self.engine.begin() as connection:
            for part in chunks_of(ids):
                connection.execute(
                    delete(LEXICAL)
                    .where(LEXICAL.c.collection == self.collection)
                    .where(LEXICAL.c.id.in_(part))
                )

    def drop(self) -> None:
        """Forget the collection (its Chroma collection was deleted)."""
        with self.engine.begin() as connection:
            connection.execute(delete(LEXICAL).where(LEXICAL.c.collection == self.collection))

    def rename_to(self, collection: str) -> None:
        """Move this index to ``collection`` (whose own rows are dropped), in one transaction."""
        with self.engine.begin() as connection:
            connection.execute(delete(LEXICAL).where(LEXICAL.c.collection == collection))
            connection.execute(
                update(LEXICAL)
                .where(LEXICAL.c.collection == self.collection)
                .values(collection=collection)
            )

    def ids(self) -> set[str]:
        with self.engine.connect() as connection:
            rows = connection.execute(
                select(LEXICAL.c.id).where(LEXICAL.c.collection == self.collection)
            )
            return {row[0] for row in rows}

    def count(self) -> int:
        with self.engine.connect() as connection:
            return int(
                connection.execute(
                    select(func.count())
                    .select_from(LEXICAL)
                    .where(LEXICAL.c.collection == self.collection)
                ).scalar_one()
            )

    def search(self, query: str, limit: int, offset: int = 0) -> list[tuple[str, float]]:
        """The ``limit`` best chunks for ``query`` after the first ``offset``, as
        ``(chroma id, score)``, best first; ``[]`` when no term of the query is indexed."""
        unique = query_terms(query)
        if not unique or limit <= 0:
            return []
        with self.engine.connect() as connection:
            counted = connection.execute(
                _FREQUENCIES,
                {
                    "terms": unique,
                    "quoted": [_quote(t) for t in unique],
                    "collection": self.collection,
                },
            ).all()
            frequency = {term: int(rows) for term, rows in counted if term is not None}
            total = next(int(rows) for term, rows in counted if term is None)
            chosen = ranking_terms(unique, frequency, total)
            if not chosen:
                return []
            parameters = {
                "terms": chosen,
                "query": " | ".join(_quote(t) for t in chosen),
                "collection": self.collection,
                "limit": limit,
                "offset": offset,
            }
            rows = connection.execute(_BM25, parameters).all()
        return [(chunk_id, float(score)) for chunk_id, score in rows]


def pg_lexical_collections(engine: Engine) -> list[str]:
    """The physical collections with rows in the PostgreSQL lexical index."""
    create_tables(engine, LEXICAL_METADATA)
    with engine.connect() as connection:
        rows = connection.execute(select(LEXICAL.c.collection).distinct())
        return sorted(row[0] for row in rows)
