"""Which lexical index a collection has: PostgreSQL full-text rows in the records database when
it is PostgreSQL (``lexical_pg``), else the SQLite FTS5 file beside Chroma (``lexical``). Both
index ``lexical.terms`` and rank by the same BM25. Importing this module costs no SQLAlchemy:
the one-shot ``query`` on the default SQLite stores stays light."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ragingest.vectorstore.lexical.index import LexicalIndex, drop_orphans
from ragingest.vectorstore.records.location import is_shared

if TYPE_CHECKING:
    from ragingest.vectorstore.lexical.pg import PgLexicalIndex


def lexical_index(
    persist_dir: str | Path | None, collection: str, records_url: str | None = None
) -> LexicalIndex | PgLexicalIndex:
    """The lexical index of the physical ``collection`` (``LexicalIndex``'s methods)."""
    if is_shared(persist_dir, records_url):
        from ragingest.vectorstore.lexical.pg import PgLexicalIndex
        from ragingest.vectorstore.records.database import records_engine

        return PgLexicalIndex(records_engine(persist_dir, records_url), collection)
    return LexicalIndex(_folder(persist_dir), collection)


def drop_orphan_indexes(
    persist_dir: str | Path | None, records_url: str | None, alive: Callable[[], set[str]]
) -> list[str]:
    """Drop the lexical indexes of collections not in ``alive()`` (``lexical.drop_orphans``,
    for either backend); returns their names."""
    if not is_shared(persist_dir, records_url):
        return drop_orphans(_folder(persist_dir), alive)
    from ragingest.vectorstore.lexical.pg import PgLexicalIndex, pg_lexical_collections
    from ragingest.vectorstore.records.database import records_engine

    engine = records_engine(persist_dir, records_url)
    indexed = pg_lexical_collections(engine)
    if not indexed:
        return []
    living = alive()
    gone = [name for name in indexed if name not in living]
    for name in gone:
        PgLexicalIndex(engine, name).drop()
    return gone


def _folder(persist_dir: str | Path | None) -> Path:
    if persist_dir is None:
        raise ValueError("the lexical index beside Chroma needs --persist-dir")
    return Path(persist_dir)
