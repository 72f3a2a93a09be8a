"""The local engine: the boilerplate scan, then each task split in this process (the writer
embeds through the store, from the embedding cache first)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from ragingest.errors import FileError
from ragingest.loaders.bounded import ParserPool
from ragingest.pipeline.engine import SplitOutcome
from ragingest.pipeline.options import IngestOptions
from ragingest.pipeline.plan import FileTask, scan_corpus
from ragingest.pipeline.split import Splitting, split_task
from ragingest.splitters.factory import base_splitter


def run_splitting(options: IngestOptions, embeddings: Any) -> Splitting:
    """The run's ``Splitting``: its base splitter is built on the first split, with the
    model's tokenizer (``embeddings.lazy``: the model loads only when something is split)."""
    return Splitting(
        options.split,
        lambda: base_splitter(options.split, info=embeddings.lazy.embeddings.info),
        options.max_file_bytes,
        options.cleaning,
        options.content_types,
    )


def split_outcome(task: FileTask, splitting: Splitting, corpus: Any = None) -> SplitOutcome:
    try:
        return SplitOutcome(task, chunks=split_task(task, splitting, corpus))
    except FileError as exc:
        return SplitOutcome(task, error=exc)


class LocalEngine:
    def __init__(self, options: IngestOptions, embeddings: Any) -> None:
        self.options = options
        self.splitting = run_splitting(options, embeddings)

    @contextlib.contextmanager
    def outcomes(self, tasks: Sequence[FileTask]) -> Iterator[Iterator[SplitOutcome]]:
        o = self.options
        parsers = ParserPool(o.file_timeout, o.file_memory_mb)
        if tasks:  # the worker starts now, in parallel; nothing to parse, no worker
            parsers.start()
        self.splitting.parsers = parsers
        try:
            corpus = scan_corpus(tasks, o.cleaning, o.max_file_bytes, parsers)
            yield (split_outcome(task, self.splitting, corpus) for task in tasks)
        finally:
            parsers.close()

    def written(self, seconds: float) -> None:
        pass
