"""Collection aliases: the user-facing collection name → the physical Chroma collection that
serves it (``live``) and the one a ``--rebuild`` is filling (``building``), in the
``ragingest_alias`` table of the records database (``vectorstore.records``). Chroma can't
rename a collection in every version; switching ``live`` is one committed row (a rebuild then
gives the Chroma collection its name back: ``pipeline.lifecycle``, ``set_live``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Select, select

from ragingest.vectorstore.names import safe_name
from ragingest.vectorstore.records.database import (
    ALIAS,
    ensure_schema,
    has_table,
    records_engine,
    upsert,
)
from ragingest.vectorstore.records.location import resolve_in_default_file


@dataclass
class Alias:
    """A collection name as users type it, the physical collection serving it and the one a
    rebuild is filling."""

    name: str  # what users type
    live: str  # the physical Chroma collection serving it
    building: str | None = None  # the physical collection a --rebuild is filling
    generation: int = 0


def _select_alias(name: str) -> Select[str, str | None, int]:
    return select(ALIAS.c.live, ALIAS.c.building, ALIAS.c.generation).where(ALIAS.c.name == name)


class Catalog:
    """The alias table: which physical collection serves a collection name."""

    def __init__(self, persist_dir: str | Path, records_url: str | None = None) -> None:
        self.engine = ensure_schema(records_engine(persist_dir, records_url))

    def get(self, name: str) -> Alias:
        """The alias ``name`` (a new one, served by its own physical name, when none is
        recorded)."""
        with self.engine.connect() as connection:
            row = connection.execute(_select_alias(name)).first()
        return Alias(name, row[0], row[1], row[2]) if row else Alias(name, safe_name(name))

    def _write(self, alias: Alias) -> None:
        with self.engine.begin() as connection:
            upsert(
                connection,
                ALIAS,
                [
                    {
                        "name": alias.name,
                        "live": alias.live,
                        "building": alias.building,
                        "generation": alias.generation,
                    }
                ],
            )

    def start_build(self, name: str, taken: Callable[[str], bool] = lambda _name: False) -> str:
        """Name (and record) a new physical collection for rebuilding ``name``: the next
        ``<physical name>__<generation>`` nobody else holds, neither in this table (a name users
        type, another name's live or rebuild collection) nor by ``taken`` (the caller's
        check: a Chroma collection of another name)."""
        alias = self.get(name)
        while True:
            alias.generation += 1
            candidate = f"{safe_name(name)}__{alias.generation}"
            if not self._held(candidate, name) and not taken(candidate):
                break
        alias.building = candidate
        self._write(alias)
        return candidate

    def _held(self, physical: str, owner: str) -> bool:
        """Whether an alias other than ``owner`` is or uses the physical name ``physical``."""
        query = select(ALIAS.c.name).where(
            (ALIAS.c.name != owner)
            & (
                (ALIAS.c.name == physical)
                | (ALIAS.c.live == physical)
                | (ALIAS.c.building == physical)
            )
        )
        with self.engine.connect() as connection:
            return connection.execute(query).first() is not None

    def drop_build(self, name: str) -> None:
        """Forget the rebuild in progress of ``name``."""
        alias = self.get(name)
        alias.building = None
        self._write(alias)

    def swap(self, name: str) -> str:
        """Make the finished build live, in one commit; returns the physical name it replaced."""
        alias = self.get(name)
        if not alias.building:
            raise RuntimeError(f"no rebuild of {name!r} to swap in")
        old, alias.live, alias.building = alias.live, alias.building, None
        self._write(alias)
        return old

    def set_live(self, name: str, physical: str) -> None:
        """Record that ``physical`` serves ``name`` (a settled rebuild), in one commit."""
        alias = self.get(name)
        alias.live = physical
        self._write(alias)


def read_alias(
    persist_dir: str | Path | None, name: str, records_url: str | None = None
) -> Alias | None:
    """The recorded alias of ``name``, or None. Reads only; creates nothing (no table, no
    SQLite file)."""
    engine = records_engine(persist_dir, records_url)
    if not has_table(engine, ALIAS):
        return None
    with engine.connect() as connection:
        row = connection.execute(_select_alias(name)).first()
    return Alias(name, row[0], row[1], row[2]) if row else None


def resolve_collection(
    persist_dir: str | Path | None, name: str, records_url: str | None = None
) -> str:
    """The physical collection serving ``name`` (``name`` itself unless a rebuild
    swapped another in; any other name maps to ``names.safe_name``). Reads only;
    creates nothing."""
    found = resolve_in_default_file(persist_dir, name, records_url)
    if found is not None:
        return found
    alias = read_alias(persist_dir, name, records_url)
    return alias.live if alias else safe_name(name)
