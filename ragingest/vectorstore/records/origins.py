"""Which documents of a collection ragingest wrote, and which other code did.

ragingest's chunk ids are ``ChunkRecord.id`` (64 hex digits), recorded in the record-manager
namespace of the physical collection (``records.namespace``). A document is someone else's
when its id has another form (LangChain's ``index()`` keys by default, an app's own ids) or
when another namespace of the same records database records it (``index()`` through any
``RecordManager`` over that table, under a namespace of its own). ragingest never updates nor
deletes such documents: the run's repair (``Writer.reconcile``) and deletion of sources gone
from the roots leave them alone, and ``status`` counts them apart.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from ragingest.vectorstore.records.record_manager import IndexRecords

RECORD_ID = re.compile(r"[0-9a-f]{64}")  # ChunkRecord.id: a sha256


def ragingest_form(key: str) -> bool:
    return RECORD_ID.fullmatch(key) is not None


@dataclass
class Origins:
    """The ids of one collection (Chroma's and its namespace's records), by who wrote them."""

    ours_in_chroma: set[str] = field(default_factory=set)  # ragingest's form, no other owner
    ours_recorded: set[str] = field(default_factory=set)  # ragingest's form, in its namespace
    foreign_in_chroma: set[str] = field(default_factory=set)  # written by other code
    foreign_recorded: set[str] = field(default_factory=set)  # other code's, in this namespace
    elsewhere: dict[str, int] = field(default_factory=dict)  # other namespace -> its ids here

    @property
    def consistent(self) -> bool:
        """Whether Chroma and the record manager agree on ragingest's own chunks."""
        return self.ours_in_chroma == self.ours_recorded


def ragingest_sources(manager: IndexRecords, known: Iterable[str]) -> set[str]:
    """The sources ragingest wrote into the collection: every one with a file state
    (``known``), and every record group of ``manager`` with at least one ragingest id. A group
    whose records all carry other code's ids and that has no file state was written by other
    code through this record manager (LangChain's ``index()``): a run never deletes it, so it
    is not one of ragingest's sources."""
    known = set(known)
    groups = set(manager.list_groups()) - known
    return known | {
        group
        for group in groups
        if not (keys := manager.list_keys(group_ids=[group])) or any(map(ragingest_form, keys))
    }


def origins(chroma_ids: Iterable[str], manager: IndexRecords) -> Origins:
    """Sort a collection's ids (``chroma_ids``) and its namespace's records by writer."""
    ids = set(chroma_ids)
    recorded = set(manager.list_keys())
    result = Origins()
    result.ours_recorded = {k for k in recorded if ragingest_form(k)}
    result.foreign_recorded = recorded - result.ours_recorded
    unrecorded = sorted(ids - recorded)
    owners = manager.owners_elsewhere(unrecorded) if unrecorded else {}
    for owner in owners.values():
        result.elsewhere[owner] = result.elsewhere.get(owner, 0) + 1
    for key in ids:
        if ragingest_form(key) and key not in owners:
            result.ours_in_chroma.add(key)
        else:
            result.foreign_in_chroma.add(key)
    return result
