"""Applying a run's plan: every item's outcome said in the report, the parsed files written.

Contract: ``update(plan, engine, writer, options)`` walks ``plan.items`` in order, once each:
skipped, unsupported, unchanged and failed-before items are reported without parsing; each
other item takes the next of ``engine.outcomes(plan.tasks)`` (the same order). A file that
failed keeps its last good chunks (a failure ``stamps.RECORDED_FAILURES`` lists is recorded
in the file states: ``stamps.failed_state``); a file deleted during the run,
or one its parser calls unsupported, is not kept. Parsed files are written through
``writer`` a group at a time (``options.write_batch_size`` chunks), their new chunks embedded
a model batch at a time before the group is full. Returns the sources whose chunks stay.
Progress: a bar on a terminal when ``options.progress`` (a long parse's progress on it).
"""

from __future__ import annotations

import contextlib
import logging
import time
from typing import Any

from ragingest.loaders.process.progress import reporting
from ragingest.pipeline.checks import FAILED_BEFORE, vanished
from ragingest.pipeline.engine import Engine
from ragingest.pipeline.options import IngestOptions
from ragingest.pipeline.pace import Pace
from ragingest.pipeline.plan import Plan
from ragingest.pipeline.report import FileResult
from ragingest.pipeline.stamps import RECORDED_FAILURES, failed_state
from ragingest.pipeline.writer import Group, Writer
from ragingest.schema import ChunkRecord

log = logging.getLogger(__name__)


def update(plan: Plan, engine: Engine, writer: Writer, options: IngestOptions) -> set[str]:
    """Walk the plan in order: report the unsupported and unchanged files, take each task's
    records from the engine and write them a group of files at a time. Returns the sources
    whose chunks stay (all but the unsupported: a failed file keeps its last good chunks)."""
    report = writer.report
    keep: set[str] = set()
    group: Group = []
    pending = 0
    unembedded: list[ChunkRecord] = []  # of the group, embedded a model batch at a time
    bar = _progress(plan.items, options.progress)
    sources = {task.name: task.source for task in plan.tasks}  # copies are named by source
    pace = Pace()

    def flush() -> None:
        if group:
            clock = time.perf_counter()
            writer.write(group)
            seconds = time.perf_counter() - clock
            engine.written(seconds)
            pace.wrote(pending, seconds)

    with _parse_progress(bar), engine.outcomes(plan.tasks) as outcomes:
        for item in bar:
            if item.status == "skipped":  # not kept: chunks of what it was before go
                assert item.skipped is not None
                log.warning("skipped %s: %s", item.source, item.skipped.reason)
                report.files.append(FileResult.skipped(item.skipped))
                continue
            if item.status == "unsupported":
                exc = item.unsupported
                assert exc is not None
                report.files.append(
                    FileResult(item.source, "unsupported", error=exc.reason, kind=exc.kind)
                )
                continue
            keep.add(item.source)
            if item.status == "failed_before":  # its last good chunks stay
                report.files.append(FileResult(item.source, "failed", error=FAILED_BEFORE,
                                               kind=item.failure))  # fmt: skip
                continue
            if item.status == "unchanged":
                assert item.state is not None
                report.files.append(FileResult(item.source, "unchanged", chunks=item.state.chunks))
                report.skipped += item.state.chunks
                continue
            outcome = next(outcomes)
            error = outcome.error
            if error is not None and error.kind == "unsupported":
                keep.discard(item.source)
                report.files.append(
                    FileResult(item.source, "unsupported", error=error.reason, kind=error.kind)
                )
                continue
            if error is not None and vanished(outcome.task):  # gone, not failed
                keep.discard(item.source)  # its chunks go with the other vanished files
                log.warning("%s: deleted during the run", item.source)
                report.files.append(
                    FileResult(item.source, "deleted", error="deleted during the run")
                )
                continue
            if error is not None:  # its last good chunks stay
                log.warning("%s", error)
                stamp = outcome.task.stamp
                if error.kind in RECORDED_FAILURES and stamp is not None:
                    failed = failed_state(stamp, error.kind, 0, outcome.task.access)
                    writer.states.put([(item.source, failed)])
                report.files.append(
                    FileResult(item.source, "failed", error=error.reason, kind=error.kind)
                )
                continue
            chunks = outcome.chunks
            assert chunks is not None
            status = "partial" if chunks.lost else "ok"
            report.files.append(
                FileResult(
                    item.source, status, len(chunks), cleaning=chunks.cleaning, notes=chunks.notes,
                    removed=[r.as_dict() for r in chunks.removed],
                    copies=[sources.get(name, name) for name in chunks.copies],
                )
            )  # fmt: skip
            group.append((outcome.task, chunks))
            pending += len(chunks)
            pace.show(bar, item.source, len(chunks))
            unembedded.extend(chunks)
            if pending >= options.write_batch_size:
                flush()
                group, pending, unembedded = [], 0, []
            elif len(unembedded) >= options.embed_batch_size:  # the encoder starts before the group
                writer.embed_new(unembedded)
                unembedded = []
        flush()
    return keep


def _parse_progress(bar: Any) -> contextlib.AbstractContextManager[None]:
    """A long parse's progress (OCR pages) on the bar when there is one, else logged."""
    if not hasattr(bar, "set_postfix_str") or bar.disable:  # no bar (not a terminal)
        return contextlib.nullcontext()
    return reporting(bar.set_postfix_str)


def _progress(items: list, enabled: bool) -> Any:
    if not enabled:
        return items
    from tqdm import tqdm

    # disable=None: a bar only on a terminal, never redraws in a log file or a pipe
    return tqdm(items, desc="ingest", unit="file", leave=False, disable=None)
