"""Document sources in the plan of a run: a LangChain loader's or given documents, as tasks
like a walked file's.

``plan_sources`` loads every ``DocumentSource`` once (``loaders.inputs.sources``) and gives each of
its ``SourceTask``s one ``PlanItem``, keyed by the task's group (``GROUP_PREFIX`` + its
``metadata["source"]``): ``unchanged`` when the content hash and code version match the
recorded state (the documents are then not split or embedded), else ``parse`` with the
documents carried by the ``FileTask``. The stamp of a task is ``FileStamp(size=characters,
mtime_ns=0, sha256=content hash)``, so the run's skip rule (``plan.is_unchanged``) is the one
for files too.

Loaders run in a parser worker process under the per-file bounds (``--file-timeout``,
``--file-memory-mb``; ``loaders.inputs.sources``). A source that failed (its loader raised or ran
past a bound, or its documents clash with another source's key)
is reported with the reason, and ``SourcePlan.keep`` keeps the chunks of every document
source recorded before: what vanished from a failed loader's output is deleted only by the
next good run (nothing is lost to a network hiccup).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ragingest.loaders.cleaning.rules import CleaningRules
from ragingest.loaders.inputs.sources import (
    GROUP_PREFIX,
    DocumentSource,
    SourceError,
    SourceTask,
    unique_tasks,
)
from ragingest.loaders.process.bounded import ParserPool
from ragingest.pipeline.access_policy import AccessPolicy, document_access, page_access
from ragingest.pipeline.plan import FileTask, PlanItem, is_unchanged
from ragingest.pipeline.stamps import FileStamp, FileState


@dataclass
class SourcePlan:
    """The plan of a run's non-file sources: an item per document, the sources that failed."""
    items: list[PlanItem] = field(default_factory=list)
    failed: list[SourceError] = field(default_factory=list)

    def keep(self, recorded: Iterable[str]) -> set[str]:
        """The recorded groups that stay although this run did not produce them: every
        document source's when some source failed, else none."""
        if not self.failed:
            return set()
        return {group for group in recorded if group.startswith(GROUP_PREFIX)}


def stamp_of(task: SourceTask) -> FileStamp:
    """The stamp of a non-file source: its size and content hash (no modification time)."""
    return FileStamp(task.size, 0, task.content_hash)


def plan_sources(
    sources: Sequence[DocumentSource],
    known: dict[str, FileState],
    cleaning: CleaningRules | None = None,
    file_timeout: float | None = None,
    file_memory_mb: int | None = None,
    policy: AccessPolicy | None = None,
) -> SourcePlan:
    """The plan items of ``sources`` (module docstring), in source order. Loaders run in a
    parser worker under ``file_timeout`` seconds and ``file_memory_mb`` each, as files do
    (``loaders.process.bounded``; None: unbounded, here). Under an access ``policy`` each
    item carries its readers (``source_access``); a source whose documents name bad readers,
    or name readers in a run without a policy, fails (named) and the others go on."""
    plan = SourcePlan()
    tasks: list[SourceTask] = []
    loaders = any(not source.given for source in sources)
    parsers = ParserPool(file_timeout, file_memory_mb) if loaders else None
    try:
        for source in sources:
            try:
                tasks.extend(source.tasks(cleaning, parsers))
            except SourceError as exc:
                plan.failed.append(exc)
    finally:
        if parsers is not None:
            parsers.close()
    for task in unique_tasks(tasks):
        if isinstance(task, SourceError):
            plan.failed.append(task)
            continue
        try:
            access = source_access(task, policy)
        except ValueError as exc:
            plan.failed.append(SourceError(task.origin, str(exc)))
            continue
        stamp = stamp_of(task)
        state = known.get(task.group)
        paged = policy is not None and access is None  # its pages' own readers
        if is_unchanged(stamp, state):
            plan.items.append(
                PlanItem(task.group, "unchanged", state=state, access=access, page_readers=paged)
            )
        else:
            file_task = FileTask(task.group, stamp=stamp, documents=task.documents, access=access)
            plan.items.append(
                PlanItem(task.group, "parse", task=file_task, access=access, page_readers=paged)
            )
    return plan


def source_access(task: SourceTask, policy: AccessPolicy | None) -> tuple[str, ...] | None:
    """The readers of a document source's task: its documents' ``access`` when they name
    one, else the ``policy``'s for its key; None without a policy, and None for joined pages
    that name different readers (each chunk carries its pages', ``pipeline.split``: the
    task has no one list to compare or write in place; a change of them is a change of
    content). ``ValueError`` naming the
    source when its documents' readers are bad, or named without a policy (they would not be
    enforced)."""
    metadata = [d.metadata for d in task.documents]
    given = document_access(metadata, task.key)
    paged = page_access(metadata, task.key)
    if policy is None:
        if given is not None or paged is not None:
            raise ValueError(
                f"{task.key}: its documents name readers (metadata['access']) but this run has "
                "no access policy, so nothing would enforce them: pass "
                "access_policy=AccessPolicy() (deny by default) or give --config FILE with "
                "[access_policy]"
            )
        return None
    if paged is not None:  # each chunk gets its pages' readers when it is split
        return None
    return given if given is not None else policy.access_for(task.key)
