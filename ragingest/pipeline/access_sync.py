"""The access policy in a run: the collection's policy kept (never widened), each planned source
given its readers, and a change of readers written to every copy before anything is parsed.

Contract:

- ``recorded_settings``: what the collection records about the run's splitting, plus
  ``collection_info.POLICY_SETTING`` under a policy. A collection is made with or without a
  policy (``collection_info.ACCESS_POLICY_KEY``) and keeps it: a run with a policy on a
  collection made without one is refused unless ``rebuild`` (the rebuild is made with the
  policy; vectors come from the embedding cache), and ``refuse_widening`` refuses a run
  without a policy on a collection made with one, even with ``rebuild`` (readers would widen
  to everyone), naming the config to give.
- ``sync_access``: every kept item of the plan (``parse``, ``unchanged``, ``failed_before``)
  gets its readers (``AccessPolicy.access_for``; a document source's came with it,
  ``pipeline.sources``). Where they differ from the file state's (or the state is gone while
  chunks are recorded), the file's chunks and parent sections get the new list in one
  ``ChunkSink.set_access`` under the write gate, then its state row (``Writer.set_access``):
  a revocation reaches every copy of a file at once, and nothing is embedded again. A file
  parsed afterwards writes its new chunks with the same list (``FileTask.access``).
- ``sync_held``: the document sources kept without being read (their loader failed) get the
  readers the policy's rule allows now, never more than they held (``shared_readers``).
- A walked file reached through a symlink inside the ingested folders is judged by its
  target's key (``ruled_source``), and its ``unix`` readers by the target's folders.
- The report names the policy, the files whose readers changed and those no rule covers
  (readable by no one).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path, PurePosixPath

from ragingest.errors import CollectionMismatchError
from ragingest.loaders.source_keys import printable
from ragingest.loaders.sources import GROUP_PREFIX
from ragingest.pipeline.access_policy import AccessPolicy, shared_readers
from ragingest.pipeline.options import IngestOptions
from ragingest.pipeline.plan import Plan, PlanItem
from ragingest.pipeline.report import RunReport
from ragingest.pipeline.state import FileState
from ragingest.pipeline.writer import Writer
from ragingest.schema import NO_READER
from ragingest.vectorstore.identity import ACCESS_POLICY_KEY, POLICY_SETTING

log = logging.getLogger(__name__)
KEPT = ("parse", "unchanged", "failed_before")  # items whose chunks stay after the run


def recorded_settings(options: IngestOptions) -> dict[str, object]:
    """The settings the collection records for this run (module docstring)."""
    settings: dict[str, object] = options.split.recorded()
    if options.access_policy is not None:
        settings[POLICY_SETTING] = True
    return settings


def refuse_widening(live: Mapping[str, object] | None, options: IngestOptions) -> None:
    """``CollectionMismatchError`` when the live collection (its metadata ``live``; None: none
    yet) was made under an access policy and this run has none (module docstring); before
    anything is written."""
    if options.access_policy is not None or not (live or {}).get(ACCESS_POLICY_KEY):
        return
    raise CollectionMismatchError(
        f"collection {options.collection!r} has an access policy (its chunks name who may "
        "read them) and this run gives none: give the operator's config that holds its "
        "[[access]] rules and [access_policy] (--config FILE; Python: "
        "access_policy=AccessPolicy.from_config(FILE)). A policy is never dropped from a "
        "collection (every reader would see every document): to build one without, ingest "
        "into another --collection"
    )


def sync_access(
    plan: Plan,
    policy: AccessPolicy | None,
    writer: Writer,
    known: dict[str, FileState],
    report: RunReport,
) -> None:
    """Give each kept item its readers and write the changed ones (module docstring)."""
    if policy is None:
        return
    report.access_policy = policy.origin
    plan.items[:] = [_with_access(item, policy) for item in plan.items]
    kept = [item for item in plan.items if item.status in KEPT and item.access is not None]
    stateless = [i for i in kept if i.status == "parse" and i.source not in known]
    recorded = set(writer.manager.list_groups()) if stateless else set()
    for item in kept:
        assert item.access is not None
        state = known.get(item.source)
        if item.access == (NO_READER,):
            report.unreadable.append(item.source)
        if state is None and item.source not in recorded:
            continue  # new: its chunks are written with their readers
        if state is not None and state.access == item.access:
            continue
        writer.set_access(item.source, item.access, state)
        report.access_changed.append(item.source)
    if report.access_changed:
        log.info("readers changed for %d files", len(report.access_changed))


def sync_held(
    held: Iterable[str],
    policy: AccessPolicy | None,
    writer: Writer,
    known: dict[str, FileState],
    report: RunReport,
) -> None:
    """Readers for the recorded document sources this run keeps without having read them
    (``held``: their loader failed, so the run keeps what the last good run wrote): what the
    policy's rule for each allows now, narrowed to what it held before
    (``shared_readers``: a connector's own list is never widened to the rule's), written
    in place like any change. A reader the policy dropped since is dropped here too, and a
    source whose old and new readers share no one is hidden until it is read again; so is one
    whose readers its state does not name (pages with their own readers, a change stopped
    half-way): its state row goes first, so the next good run parses it again in full."""
    if policy is None:
        return
    for group in sorted(held):
        state = known.get(group)
        if state is None or state.access is None:  # readers unknown, or each page's own
            writer.states.delete([group])  # first: read again in full by the next good run
            writer.set_access(group, (NO_READER,), None)
            report.access_changed.append(group)
            continue
        rule = policy.access_for(group.removeprefix(GROUP_PREFIX))
        access = shared_readers(state.access, rule)
        if state.access != access:
            writer.set_access(group, access, state)
            report.access_changed.append(group)


def _with_access(item: PlanItem, policy: AccessPolicy) -> PlanItem:
    """``item`` with its readers: a walked file's from ``policy`` (a document source's came
    with it); its task's too."""
    if item.status not in KEPT or item.page_readers:  # pages: each chunk its pages' readers
        return item
    access = item.access
    if access is None:
        access = policy.access_for(ruled_source(item.source, item.path), item.path)
    task = item.task if item.task is None else replace(item.task, access=access)
    return replace(item, access=access, task=task)


def ruled_source(source: str, path: Path | None) -> str:
    """The source key the rules judge for the walked file ``path`` (keyed ``source``): the
    key of the file it really is, when a symlink inside the ingested folders leads to it
    (``pub/n.md -> ../hr/s.md`` is judged as ``hr/s.md``), so a link never reads a file
    under another rule's readers. A link out of the folders (followed only when the
    operator asks, ``--follow-symlinks-outside``) keeps its own key: no rule covers its
    target's path."""
    if path is None:
        return source
    depth = len(PurePosixPath(source).parts)
    absolute = Path(os.path.abspath(path))
    if depth == 0 or depth >= len(absolute.parts):
        return source
    base = os.path.realpath(absolute.parents[depth - 1])
    try:  # without a link on the way this is ``source`` itself
        return printable(Path(os.path.realpath(absolute)).relative_to(base).as_posix())
    except ValueError:
        return source
