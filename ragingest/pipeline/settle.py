"""Settling a rebuild: the collection a ``--rebuild`` filled (``NAME__<n>``) gets the physical
name the typed name maps to (``names.safe_name``: the typed name itself where it is safe), so
that the store's own clients (plain ``langchain_chroma.Chroma(collection_name=NAME, ...)``)
read our data under the name they were given.

The store renames a collection in place (``port.Backend.rename``: a reader holding it keeps
reading); what ragingest keeps beside it is keyed by the physical name and moves with it.
The steps, each idempotent, in this order, under the writer lock:

1. the records database (records, journal, file states): moved in one transaction;
2. the parent sections: copied (readers of the old name keep theirs until step 5);
3. the lexical index: its tables renamed in one transaction (it also heals itself:
   ``sync_lexical``);
4. the store: a collection already holding the target name is not live (garbage left by a
   kill, or one a plain client created), so it is dropped; the rebuilt one is renamed;
5. the alias row says the target name serves it (one commit); the old parent rows go.

Until step 5 the alias row names the old physical collection, and every step is done again
by the next run (``Lifecycle.prepare``) after a kill anywhere: the collection stays usable
throughout (between steps 4 and 5, for the instant of two commits, a reader opening the
collection by its name finds it gone and can retry).
"""

from __future__ import annotations

from sqlalchemy import delete, func, select, update
from sqlalchemy.engine import Engine

from ragingest.vectorstore.records.database import FILE_STATE, JOURNAL, namespace
from ragingest.vectorstore.records.langchain_sql import UPSERTION_RECORD


def move_records(engine: Engine, old: str, new: str) -> None:
    """Records, journal and file states of physical collection ``old`` → ``new`` (whose own
    rows are replaced), in one transaction; a table with no rows of ``old`` is left as is."""
    with engine.begin() as connection:
        for table in (UPSERTION_RECORD, JOURNAL, FILE_STATE):
            column = table.c.namespace
            held = connection.execute(
                select(func.count()).select_from(table).where(column == namespace(old))
            ).scalar()
            if held:
                connection.execute(delete(table).where(column == namespace(new)))
                connection.execute(
                    update(table).where(column == namespace(old)).values(namespace=namespace(new))
                )
