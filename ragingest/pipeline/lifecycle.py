"""The collection lifecycle: which physical collection a run writes, and the alias around it,
over the store's ``port.Backend``. ``prepare`` resolves the alias, refuses a model/settings
change unless rebuilding (then it names the physical collection to fill: the interrupted
rebuild when it was for the same model and settings, else a new one), drops an unfinished
rebuild nobody wants and collects garbage; ``finish`` swaps a completed rebuild in, then
``settle`` gives it the physical name the typed name maps to (``pipeline.settle``; redone by
the next ``prepare`` after a kill). ``drop`` removes a physical collection with everything kept
beside it: records, file states, parent sections, lexical index.
"""

from __future__ import annotations

import contextlib
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragingest.errors import CollectionMismatchError
from ragingest.pipeline.settle import move_records
from ragingest.pipeline.state import FileStates
from ragingest.pipeline.state import namespaces as state_namespaces
from ragingest.vectorstore.identity import ALIAS_KEY, MODEL_KEY, mismatch, model_identity
from ragingest.vectorstore.lexical.location import lexical_index
from ragingest.vectorstore.names import safe_name
from ragingest.vectorstore.port import Backend
from ragingest.vectorstore.records.aliases import Alias, Catalog
from ragingest.vectorstore.records.database import namespace, physical_of
from ragingest.vectorstore.records.parents import ParentStore, parent_collections
from ragingest.vectorstore.records.record_manager import record_manager

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Target:
    """The physical collection a run writes, for which model and settings."""

    physical: str
    model: str
    fingerprint: str
    settings: dict[str, Any]
    rebuilding: bool  # swapped in by ``finish``


class Lifecycle:
    """The collections behind one alias: which one a run writes, rebuilds swapped in when
    complete, leftovers dropped."""
    def __init__(
        self, persist_dir: Path, name: str, backend: Backend, records_url: str | None = None
    ) -> None:
        self.persist_dir, self.name, self.backend = persist_dir, name, backend
        self.records_url = records_url
        self.catalog = Catalog(persist_dir, records_url)

    def prepare(self, model: str | None, settings: dict[str, object], rebuild: bool) -> Target:
        """The collection this run writes: the live one, or a rebuild when ``rebuild`` and the
        model or settings differ; ``CollectionMismatchError`` when they differ without
        ``rebuild``. A swapped-in rebuild killed before it got its name is settled first."""
        self.settle()
        alias = self.catalog.get(self.name)
        live = self.backend.metadata(alias.live)
        owner = (live or {}).get(ALIAS_KEY)
        if owner is not None and owner != self.name:
            raise CollectionMismatchError(
                f"collection {self.name!r} is held by the rebuild of {owner!r} (its Chroma "
                f"collection {alias.live!r}): use another --collection"
            )
        name, fingerprint = model_identity(model or (live or {}).get(MODEL_KEY))
        target = alias.live
        problem = live is not None and mismatch(live, self.name, name, fingerprint, settings)
        if problem:
            if not rebuild:
                raise CollectionMismatchError(problem)
            target = self._build_target(name, fingerprint, settings)
        elif alias.building:  # an unfinished rebuild nobody wants any more
            self.catalog.drop_build(self.name)
            self.drop(alias.building)
        self.collect_garbage(self.catalog.get(self.name))
        if target != alias.live:
            log.warning("rebuilding %r into %r; it is swapped in when complete", self.name, target)
        return Target(target, name, fingerprint, settings, target != alias.live)

    def finish(self, target: Target) -> bool:
        """Swap a completed rebuild in and drop what it replaced; whether it swapped."""
        if not target.rebuilding:
            return False
        self.drop(self.catalog.swap(self.name))
        self.settle()
        return True

    def live(self) -> str:
        """The physical collection serving the name now."""
        return self.catalog.get(self.name).live

    def settle(self) -> None:
        """Give the live collection the physical name of the typed name (``pipeline.settle``)."""
        alias = self.catalog.get(self.name)
        home = safe_name(self.name)
        if alias.building or alias.live == home:
            return
        old = alias.live
        if self.backend.metadata(old) is None:
            if self.backend.metadata(home) is None:
                return  # nothing to settle
        else:
            if self.backend.metadata(home) is not None:  # not live: garbage
                self.backend.drop(home)
        move_records(self.catalog.engine, old, home)
        ParentStore(self.persist_dir, old, self.records_url).copy_to(home)
        lexical_index(self.persist_dir, old, self.records_url).rename_to(home)
        if self.backend.metadata(old) is not None:
            self.backend.rename(old, home)  # in place: open handles keep working
        self.catalog.set_live(self.name, home)
        ParentStore(self.persist_dir, old, self.records_url).drop()
        log.info("collection %r settled under its own name %r", self.name, home)

    def _build_target(self, model: str, fingerprint: str, settings: dict[str, object]) -> str:
        alias = self.catalog.get(self.name)
        if alias.building:
            existing = self.backend.metadata(alias.building)
            if existing is None or not mismatch(existing, alias.name, model, fingerprint, settings):
                log.warning("resuming the interrupted rebuild of %r", alias.name)
                return alias.building
            self.drop(alias.building)
        target = self.catalog.start_build(alias.name, taken=self._held_by_other)
        self.drop(target)  # a leftover of this name's own earlier rebuild
        return target

    def _held_by_other(self, physical: str) -> bool:
        """Whether a collection ``physical`` exists in the store that is not this name's (a
        collection someone called ``docs__1``): a rebuild never takes, nor drops, it."""
        existing = self.backend.metadata(physical)
        return existing is not None and existing.get(ALIAS_KEY) != self.name

    def collect_garbage(self, alias: Alias) -> None:
        """Drop the physical collections of this name that neither serve it nor are being
        built (left by a run killed between a swap and the drop of the old collection), and
        what is kept beside the store for such collections (records, states, parents)."""
        keep = {alias.live, alias.building}
        doomed: set[str] = set()
        for held in self.backend.names():
            metadata = self.backend.metadata(held) or {}
            ours = metadata.get(ALIAS_KEY) == alias.name or held == alias.name
            if ours and held not in keep:
                doomed.add(held)
        pattern = re.compile(re.escape(namespace(safe_name(alias.name))) + r"(__\d+)?")
        manager = record_manager(self.persist_dir, alias.live, self.records_url)
        known = set(manager.namespaces())
        known |= set(state_namespaces(self.persist_dir, self.records_url))
        parents = parent_collections(self.persist_dir, self.records_url)
        known |= {namespace(name) for name in parents}
        for name in known:
            physical = physical_of(name)
            if (
                pattern.fullmatch(name)
                and physical not in keep
                and self.backend.metadata(physical) is None
            ):
                doomed.add(physical)
        for physical in sorted(doomed):
            self.drop(physical)

    def drop(self, physical: str) -> None:
        """Delete a physical collection, then its records, file states, parents and lexical
        index."""
        with contextlib.suppress(Exception):  # already gone
            self.backend.drop(physical)
        record_manager(self.persist_dir, physical, self.records_url).drop_namespace()
        FileStates(self.persist_dir, namespace(physical), self.records_url).drop()
        ParentStore(self.persist_dir, physical, self.records_url).drop()
        lexical_index(self.persist_dir, physical, self.records_url).drop()
        log.info("dropped collection %r", physical)
