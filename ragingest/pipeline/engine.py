"""What an engine is: it turns the plan's tasks into their records, in task order.

Both engines (``engine_local``, ``engine_ray``) implement ``Engine``; neither knows the
writer. ``outcomes(tasks)`` is a context manager yielding an iterator of ``SplitOutcome``,
one per task, in order (the run consumes it while writing); ``written(seconds)`` tells the
engine a group was written (the Ray engine's statistics).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol

from ragingest.errors import FileError
from ragingest.pipeline.plan import FileTask
from ragingest.pipeline.split import FileChunks


@dataclass
class SplitOutcome:
    """A task's records (``chunks``; a record's ``vector`` set where the engine embedded it),
    or the ``error`` that names why its file could not be split."""

    task: FileTask
    chunks: FileChunks | None = None
    error: FileError | None = None


class Engine(Protocol):
    """How a run turns file tasks into split outcomes (the local engine or Ray)."""

    def outcomes(
        self, tasks: Sequence[FileTask]
    ) -> AbstractContextManager[Iterator[SplitOutcome]]:
        """A context giving the split outcome of each task; its resources are released on
        exit."""
        ...

    def written(self, seconds: float) -> None:
        """Record that a batch of chunks took ``seconds`` to write (for the engine's
        statistics)."""
        ...
