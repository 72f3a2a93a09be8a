"""The local engine: the corpus scan (copies, boilerplate), then each task split in this
process (the writer embeds through the store, from the embedding cache first). With the onnx
backend the tasks are split on a thread of their own, up to one write group ahead
(``prefetch``), so the encoder never waits for the next group; torch's sentence-transformers
sets padding on the process's one tokenizer while it encodes, so there the split stays on the
run's thread."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, cast

from ragingest.errors import FileError
from ragingest.loaders.cleaning.corpus import CorpusCleaner
from ragingest.loaders.process.bounded import ParserPool
from ragingest.models.locate import backend_name
from ragingest.pipeline.engine import SplitOutcome
from ragingest.pipeline.options import IngestOptions
from ragingest.pipeline.plan import FileTask, scan_corpus
from ragingest.pipeline.prefetch import Prefetch
from ragingest.pipeline.split import Splitting, split_task
from ragingest.splitters.factory import base_splitter
from ragingest.vectorstore.cache import CachedEmbeddings

if TYPE_CHECKING:  # the type only: the model loads when something is split
    from ragingest.models.embeddings import SentenceTransformerEmbeddings


def run_splitting(options: IngestOptions, embeddings: CachedEmbeddings) -> Splitting:
    """The run's ``Splitting``: its base splitter is built on the first split, with the
    model's tokenizer (``embeddings.lazy``: the model loads only when something is split)."""
    return Splitting(
        options.split,
        lambda: base_splitter(options.split, info=_model(embeddings).info),
        options.max_file_bytes,
        options.cleaning,
        options.content_types,
        max_chunks=options.max_chunks_per_file,
    )


def split_outcome(
    task: FileTask, splitting: Splitting, corpus: CorpusCleaner | None = None
) -> SplitOutcome:
    """The outcome of loading and splitting one file: its chunks, or the ``FileError`` it failed
    with."""
    try:
        return SplitOutcome(task, chunks=split_task(task, splitting, corpus))
    except FileError as exc:
        return SplitOutcome(task, error=exc)


def _chunk_count(outcome: SplitOutcome) -> int:
    """What an outcome holds for the prefetch budget: its chunks (an error: 1)."""
    return max(1, len(outcome.chunks or ()))


def _model(embeddings: CachedEmbeddings) -> SentenceTransformerEmbeddings:
    # a run's cached embeddings wrap the run's model (runner.run builds them so)
    return cast("SentenceTransformerEmbeddings", embeddings.lazy.embeddings)


class LocalEngine:
    """The in-process engine: files parsed in a bounded worker process, split and embedded here."""

    def __init__(self, options: IngestOptions, embeddings: CachedEmbeddings) -> None:
        self.options = options
        self.splitting = run_splitting(options, embeddings)

    @contextlib.contextmanager
    def outcomes(self, tasks: Sequence[FileTask]) -> Iterator[Iterator[SplitOutcome]]:
        """A context giving the split outcome of each task in order; the parser worker is stopped
        on exit."""
        o = self.options
        parsers = ParserPool(o.file_timeout, o.file_memory_mb)
        # the worker starts now, in parallel, when a file is to be parsed (documents need none)
        if any(task.documents is None for task in tasks):
            parsers.start()
        self.splitting.parsers = parsers
        ahead: Prefetch[SplitOutcome] | None = None
        try:
            corpus = scan_corpus(tasks, o.cleaning, o.max_file_bytes, parsers)
            outcomes = (split_outcome(task, self.splitting, corpus) for task in tasks)
            if backend_name() == "onnx" and len(tasks) > 1:
                ahead = Prefetch(outcomes, o.write_batch_size, _chunk_count)
                yield ahead
            else:
                yield outcomes
        finally:
            if ahead is not None:
                ahead.close()  # no new parse starts; the one running ends with its worker
            parsers.close()
            if ahead is not None:
                ahead.join()

    def written(self, seconds: float) -> None:
        """Nothing to record: the local engine keeps no per-write statistics."""
        pass
