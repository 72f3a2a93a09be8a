"""``ingest --engine ray``: the local engine's stages as one streaming Ray Data pipeline.

The run's plan (``pipeline.plan``) decides which files are parsed; only those tasks go to Ray:

1. corpus scan (cleaning rule ``boilerplate``), a barrier: every file must be digested
   before any file is split. Map tasks load each file and return its ``FileDigest`` (block
   digests, not text); the driver streams them into the ``CorpusCleaner`` (copies, then
   boilerplate), and the split tasks get only its groups of copies and boilerplate digests;
2. then one streaming pipeline, ``rows of files → map_batches(split) → rows of chunks →
   map_batches(EmbedActor)``, consumed by the driver while it runs:

   - split (map tasks, on the CPUs the actors leave): ``split.split_task`` (the splitter, with
     the model's tokenizer, is built once per worker process); each file becomes a header row
     (its record count, its error or its cleaning counts) and one row per record. A record whose
     embedded text is in the embedding cache (a snapshot of the cache's key hashes, taken by
     the driver before the run) or earlier in the same task is not marked for embedding;
   - embed (actor pool): each actor loads the model in a thread from its start (beside the
     first splits), uses it from its first marked text and sets its torch threads to its CPU
     share (``num_cpus=0.5`` each by default: no oversubscription, and no deadlock of
     whole-CPU actors beside a task); unmarked rows pass through;
   - write (driver): rows arrive in task order (``preserve_order``); the run's loop
     (``apply_plan.update``) takes each task's ``SplitOutcome``, handed over once all of its rows
     are in, and the run's writer writes them a group of files at a time
     (``write_batch_size``): the same lock, model/settings guard, journal, ``index()`` with the
     record manager, file states, run log as a local run. The vectors travel on the records
     (``ChunkRecord.vector``); the store puts them into the embedding cache, so the cache is
     filled exactly as by a local run.

So the driver holds one file's rows and one write group, never the corpus, and embedding,
splitting and writing overlap. Re-index semantics are the local engine's: a re-run over
unchanged input parses and embeds nothing (Ray is not even started). A file that fails on Ray
fails with the local engine's error (its ``FileError`` travels in the header row), a parse
past ``--file-timeout`` or ``--file-memory-mb`` included (``ray_tasks.worker_parsers``).

Retries are Ray Data 2.60's defaults (the per-call ``max_retries``/``max_restarts`` overrides
go through ``**ray_remote_args``, deprecated and removed in 2.64): a map task whose worker died
is run again and a dead actor is restarted with its tasks retried, without a limit; an
exception raised by our code is not retried (the split catches each file's). A run that still
fails keeps the groups already written (their file states say so, as after a killed local
run) and the next run converges.
"""

from __future__ import annotations

import contextlib
import logging
import math
import pickle
import socket
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ragingest.errors import FileError
from ragingest.loaders.cleaning.corpus import CorpusCleaner
from ragingest.loaders.process.bounded import ParserPool
from ragingest.pipeline.engine import SplitOutcome
from ragingest.pipeline.engine_local import run_splitting, split_outcome
from ragingest.pipeline.options import IngestOptions
from ragingest.pipeline.plan import FileTask
from ragingest.pipeline.ray_env import data_context, failed, pool_size
from ragingest.pipeline.ray_tasks import EmbedActor, scan_batch, split_batch, task_rows
from ragingest.pipeline.split import FileChunks
from ragingest.vectorstore.cache import CachedEmbeddings, cached_text_hashes

if TYPE_CHECKING:
    from types import ModuleType

log = logging.getLogger(__name__)

ACTOR_CPUS = 0.5  # CPU share of one embedding actor (and of one map task)
ACTOR_MEMORY = 3 << 29  # bytes Ray reserves per embedding actor (e5-small peaked at 0.95 GiB)
MAX_FILES_PER_BLOCK = 32  # input rows per block: small blocks stream, few blocks scale


@dataclass
class RayStats:
    """What the last Ray run did and where its time went (the bench and docs/scaling.md)."""

    files: int = 0  # files sent to Ray
    chunks: int = 0
    texts_embedded: int = 0  # texts the actors embedded (cache misses)
    actors: int = 0
    split_workers: int = 0  # worker processes that split (each built its splitter once)
    groups: int = 0  # write groups the driver wrote while the pipeline ran
    max_buffered_files: int = 0  # most files whose rows the driver held at once
    # wall: start (runtime), scan (the barrier), first_write and pipeline (from the scan's end
    # to the first group written / the last file's rows in); driver: write, wait (for rows);
    # busy, summed over workers: scan_busy, split_busy (with splitter builds), embed_busy,
    # model_load (in a thread of each actor, overlapping the first splits)
    seconds: dict[str, float] = field(default_factory=dict)


LAST_STATS = RayStats()


class RayEngine:
    """The engine on a streaming Ray Data pipeline (module docstring)."""

    def __init__(self, options: IngestOptions, embeddings: CachedEmbeddings) -> None:
        self.options = options
        self.embeddings = embeddings
        self.splitting = run_splitting(options, embeddings)  # a file split on the driver
        self.corpus: CorpusCleaner | None = None
        self.stats = RayStats()
        self.partial: dict[str, dict[str, Any]] = {}
        self.ready: dict[str, dict[str, Any]] = {}
        self.split_pids: set[int] = set()
        self.clock = time.perf_counter()

    @contextlib.contextmanager
    def outcomes(self, tasks: Sequence[FileTask]) -> Iterator[Iterator[SplitOutcome]]:
        """A context giving the split outcome of each task from the Ray pipeline (Ray is not
        started for no tasks)."""
        if not tasks:  # nothing to parse: Ray is not even started
            yield iter(())
            return
        from ragingest.pipeline.ray_env import ray_runtime

        busy = ("write", "wait", "scan_busy", "split_busy", "embed_busy", "model_load")
        self.stats = RayStats(files=len(tasks), seconds=dict.fromkeys(busy, 0.0))
        with contextlib.ExitStack() as stack:
            o = self.options  # a file the driver splits itself parses under the same bounds
            self.splitting.parsers = ParserPool(o.file_timeout, o.file_memory_mb)  # started if used
            stack.callback(self.splitting.parsers.close)
            try:
                clock = time.perf_counter()
                ray = stack.enter_context(ray_runtime(self.options.ray_address))
                # Ray Data's bars, like the run's own, only on a terminal
                terminal = self.options.progress and sys.stderr.isatty()
                stack.enter_context(data_context(terminal))
                self.stats.seconds["start"] = time.perf_counter() - clock
                stream = self._start(ray, tasks)
            except Exception as exc:
                raise failed(exc) from exc
            rows = self._rows(stream)
            yield (self._outcome(task, rows, i == len(tasks) - 1) for i, task in enumerate(tasks))
            for _row in rows:  # rows nobody asked for
                pass
        LAST_STATS.__dict__.update(self.stats.__dict__)
        s = self.stats
        log.info("ray: %d files, %d chunks, %d embedded", s.files, s.chunks, s.texts_embedded)

    def written(self, seconds: float) -> None:
        """Count one written group and its write time in the run's statistics."""
        self.stats.seconds["write"] = self.stats.seconds.get("write", 0.0) + seconds
        self.stats.groups += 1
        if self.stats.groups == 1:
            self.stats.seconds["first_write"] = time.perf_counter() - self.clock

    def _start(self, ray: ModuleType, tasks: Sequence[FileTask]) -> Iterator[dict[str, Any]]:
        """The boilerplate scan (a barrier), then the streaming pipeline's row iterator."""
        from ray.data import ActorPoolStrategy, TaskPoolStrategy

        o, stats = self.options, self.stats
        rows = task_rows(tasks)
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        per_block = max(1, min(MAX_FILES_PER_BLOCK, len(rows) // (cpus * 16)))
        blocks = math.ceil(len(rows) / per_block)
        run = uuid.uuid4().hex  # the workers' parser pools outlive a run (ray_tasks)
        host = socket.gethostname()  # a worker elsewhere compares identities without devices

        clock = time.perf_counter()
        if o.cleaning.boilerplate:
            corpus = CorpusCleaner(o.cleaning)
            scan = ray.data.from_items(rows, override_num_blocks=blocks).map_batches(
                scan_batch, fn_kwargs={"options": o, "run": run, "host": host}, num_cpus=ACTOR_CPUS
            )
            for batch in scan.iter_batches(batch_size=None):
                stats.seconds["scan_busy"] += float(sum(batch["scan_s"]))
                for ok, digests in zip(batch["ok"], batch["digests"], strict=True):
                    if ok:  # digested as the local scan digests
                        corpus.observe_digest(*pickle.loads(digests))
            self.corpus = corpus.lean()
        stats.seconds["scan"] = time.perf_counter() - clock

        self.clock = time.perf_counter()
        cached = cached_text_hashes(self.embeddings)
        memory = ray.cluster_resources().get("memory")
        actors = pool_size(cpus, o.ray_actors, len(rows), memory, ACTOR_CPUS, ACTOR_MEMORY)
        if o.ray_actors and actors < min(o.ray_actors, len(rows)):
            log.warning(
                "--ray-actors %d is more than this cluster (%g CPUs, %.1f GiB) holds beside a "
                "split task: using %d embedding actors",
                o.ray_actors,
                cpus,
                (memory or 0) / 2**30,
                actors,
            )
        stats.actors = actors
        # split tasks on the CPUs the actors leave: no more worker processes (each builds a
        # splitter, ~4 s of tokenizer loading) than can run at once
        slots = max(1, int((cpus - actors * ACTOR_CPUS) / ACTOR_CPUS))
        name = self.embeddings.model_name
        dataset = (
            ray.data.from_items(rows, override_num_blocks=blocks)
            .map_batches(
                split_batch,
                fn_kwargs={
                    "options": o,
                    "model": name,
                    "corpus": self.corpus,
                    "cached": cached,
                    "run": run,
                    "host": host,
                },
                compute=TaskPoolStrategy(size=slots),
                num_cpus=ACTOR_CPUS,
            )
            .map_batches(
                EmbedActor,
                fn_constructor_kwargs={
                    "model": name,
                    "fingerprint": self.embeddings.fingerprint,
                    "threads": max(1, int(ACTOR_CPUS)),
                    "batch_size": o.embed_batch_size,
                },
                batch_size=o.embed_batch_size,
                compute=ActorPoolStrategy(size=actors),
                num_cpus=ACTOR_CPUS,
                memory=ACTOR_MEMORY,  # also keeps the split tasks apart (no operator fusion)
            )
        )
        return iter(dataset.iter_rows())

    def _rows(self, stream: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        """The pipeline's next rows; a Ray failure becomes a clear ``RagIngestError``."""
        while True:
            clock = time.perf_counter()
            try:
                row = next(stream)
            except StopIteration:
                return
            except Exception as exc:
                raise failed(exc) from exc
            finally:
                self.stats.seconds["wait"] += time.perf_counter() - clock
            yield row

    def _receive(self, path: str, rows: Iterator[dict[str, Any]]) -> dict[str, Any] | None:
        """Take rows until ``path``'s are all in (rows come in task order)."""
        stats = self.stats
        while path not in self.ready:
            row = next(rows, None)
            if row is None:
                break
            key = str(row["path"])
            got = self.partial.setdefault(key, {"count": int(row["count"]), "records": {}})
            seq = int(row["seq"])
            if seq < 0:
                got["header"] = pickle.loads(row["blob"])
                stats.seconds["split_busy"] += float(row["split_s"])
                self.split_pids.add(int(row["pid"]))
                stats.split_workers = len(self.split_pids)
            else:
                got["records"][seq] = (pickle.loads(row["blob"]), row["vector"])
                if row["vector"]:
                    stats.texts_embedded += 1
            stats.seconds["embed_busy"] += float(row["embed_s"])
            stats.seconds["model_load"] += float(row["load_s"])
            buffered = len(self.partial) + len(self.ready)
            stats.max_buffered_files = max(stats.max_buffered_files, buffered)
            if "header" in got and len(got["records"]) == got["count"]:
                self.ready[key] = self.partial.pop(key)
        return self.ready.pop(path, None)

    def _outcome(self, task: FileTask, rows: Iterator[dict[str, Any]], last: bool) -> SplitOutcome:
        import numpy as np

        got = self._receive(task.name, rows)
        if last:
            self.stats.seconds["pipeline"] = time.perf_counter() - self.clock
        if got is None:  # its rows never came: split here
            return split_outcome(task, self.splitting, self.corpus)
        error, cleaning = got["header"]
        if error is not None:
            kind, path, reason = error
            if isinstance(kind, type) and issubclass(kind, FileError):
                return SplitOutcome(task, error=kind(path, reason))
            return split_outcome(task, self.splitting, self.corpus)  # the local split says why
        chunks = FileChunks()
        chunks.cleaning, chunks.notes, chunks.lost, chunks.removed, chunks.copies = cleaning
        for seq in range(got["count"]):
            record, vector = got["records"][seq]
            if vector:
                record.vector = np.frombuffer(vector, dtype="<f4").tolist()
            chunks.append(record)
        self.stats.chunks += len(chunks)
        return SplitOutcome(task, chunks=chunks)
