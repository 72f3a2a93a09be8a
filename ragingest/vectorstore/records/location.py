"""Where the records database is (``vectorstore.records``), and the alias of a collection name
read from its default SQLite file with the stdlib ``sqlite3``: a one-shot ``query`` then pays
no SQLAlchemy import (~0.15 s of a cold start). Another database goes through
``aliases.read_alias``."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from contextlib import AbstractContextManager
from pathlib import Path

from ragingest.vectorstore.names import safe_name


def creation_lock(path: Path | None) -> AbstractContextManager[object]:
    """A lock file beside ``path`` (``PATH.lock``, its folder made) serializing, across
    processes, the first creation of what ``path`` holds (two first runs into one new
    directory at once); nothing is locked when ``path`` is None or its folder exists and is
    read-only (then nothing can be created there: a reader of a read-only store)."""
    folder = path.parent if path is not None else None
    if path is None or (folder is not None and folder.is_dir() and not os.access(folder, os.W_OK)):
        return contextlib.nullcontext()
    from filelock import FileLock

    path.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(str(path) + ".lock")


RECORDS_FILE = "ragingest_records.sqlite"
RECORDS_URL_ENV = "RAGINGEST_RECORDS_URL"
ALIAS_TABLE = "ragingest_alias"


def records_path(persist_dir: str | Path) -> Path:
    """The default records database: a SQLite file in the Chroma directory."""
    return Path(persist_dir) / RECORDS_FILE


def default_records_url(persist_dir: str | Path) -> str:
    return f"sqlite:///{records_path(persist_dir).absolute()}"


def records_url_for(persist_dir: str | Path | None, records_url: str | None = None) -> str:
    """The records database's URL: ``records_url``, else ``$RAGINGEST_RECORDS_URL``, else the
    SQLite file in ``persist_dir`` (what every version before the option used). Without any of
    the three: ``ValueError`` saying what to give."""
    url = records_url or os.environ.get(RECORDS_URL_ENV)
    if url:
        return url
    if persist_dir is None:
        raise ValueError(
            "no --persist-dir and no --records-url: give the Chroma directory, or a Chroma "
            f"server and the records database (--records-url or ${RECORDS_URL_ENV})"
        )
    return default_records_url(persist_dir)


def is_shared(persist_dir: str | Path | None, records_url: str | None = None) -> bool:
    """Whether the records database is PostgreSQL: then the parent sections, the lexical
    index and the embedding cache live there too, shared by every machine (else in SQLite
    files beside Chroma)."""
    return records_url_for(persist_dir, records_url).startswith("postgresql")


def resolve_in_default_file(
    persist_dir: str | Path | None, name: str, records_url: str | None = None
) -> str | None:
    """The physical collection serving ``name`` (``aliases.resolve_collection``'s
    answer) when the records database is the default SQLite file; None when it is another
    database. Reads only; creates nothing."""
    url = records_url_for(persist_dir, records_url)
    if persist_dir is None or url != default_records_url(persist_dir):
        return None
    path = records_path(persist_dir)
    live = None
    if path.is_file():
        with contextlib.closing(sqlite3.connect(path, timeout=60)) as db:
            found = db.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (ALIAS_TABLE,)
            ).fetchone()
            if found:
                row = db.execute(
                    f"SELECT live FROM {ALIAS_TABLE} WHERE name = ?", (name,)
                ).fetchone()
                live = row[0] if row else None
    return live or safe_name(name)
