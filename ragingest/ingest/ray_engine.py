"""``ingest --engine ray``: the local engine's stages as one streaming Ray Data pipeline.

The driver lists the files and checks their states exactly as the local engine does; only new
or changed files go to Ray:

1. boilerplate scan (cleaning rule ``boilerplate``), a barrier: every fingerprint must be
   counted before any file is split. Map tasks load each file and return its paragraph
   fingerprints as 16-byte digests; the driver streams them into the counter
   (``CorpusCleaner``: a digest per distinct paragraph, not its text), and the split tasks get
   only the boilerplate digests;
2. then one streaming pipeline, ``rows of files → map_batches(split) → rows of chunks →
   map_batches(EmbedActor)``, consumed by the driver while it runs:

   - split (map tasks, on the CPUs the actors leave): ``split_file`` (the splitter, with the
     model's tokenizer, is built once per worker process); each file becomes a header row
     (its chunk count, its error or its cleaning counts) and one row per chunk. A chunk whose
     embedded text is in the embedding cache (a snapshot of the cache's key hashes, taken by
     the driver before the run) or earlier in the same task is not marked for embedding;
   - embed (actor pool): each actor loads the model in a thread from its start (beside the
     first splits), uses it from its first marked text and sets its torch threads to its CPU
     share (``num_cpus=0.5`` each by default: no oversubscription, and no deadlock of
     whole-CPU actors beside a task); unmarked rows pass through;
   - write (driver): rows arrive in walk order (``preserve_order``); the local engine's loop
     (``pipeline._Run._update``) asks for each file's chunks, which are handed over once all
     of its rows are in, and writes them a group of files at a time (``write_batch_size``)
     through its own path: the same lock, model/settings guard, journal, ``index()`` with the
     record manager, file states, run log. The vectors reach it through the embedding cache's
     model slot, so the cache is filled exactly as by a local run.

So the driver holds one file's rows and one write group, never the corpus, and embedding,
splitting and writing overlap. Re-index semantics are the local engine's: a re-run over
unchanged input parses and embeds nothing (Ray is not even started). A file that fails on Ray
fails with the local engine's error (its ``FileError`` travels in the header row).

Retries are Ray Data 2.60's defaults (the per-call ``max_retries``/``max_restarts`` overrides
go through ``**ray_remote_args``, deprecated and removed in 2.64): a map task whose worker died
is run again and a dead actor is restarted with its tasks retried, without a limit; an
exception raised by our code is not retried (the split catches each file's). A run that still
fails keeps the groups already written (their file states say so, as after a killed local
run) and the next run converges.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import math
import os
import pickle
import sqlite3
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragingest.errors import FileError, RagIngestError, UnsupportedFormatError
from ragingest.ingest.pipeline import STATE_VERSION, _Run, _stamp, split_file
from ragingest.loaders import loader_for, walk
from ragingest.loaders.cleaning import FINGERPRINT_BYTES as DIGEST
from ragingest.loaders.cleaning import ChunkList, CorpusCleaner, paragraphs

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


# -- worker side -------------------------------------------------------------------------------
@functools.cache
def _splitter(model: str, settings_json: str) -> Any:
    """The splitter of one model and settings, built once per worker process."""
    from ragingest.ingest.pipeline import SplitSettings
    from ragingest.vectorstore.embeddings import SentenceTransformerEmbeddings

    settings = json.loads(settings_json)
    settings["split_levels"] = tuple(settings["split_levels"])
    return SplitSettings(**settings).splitter(SentenceTransformerEmbeddings(model))


class BoilerplateDigests(CorpusCleaner):
    """The split tasks' ``CorpusCleaner``: only the run's boilerplate digests, each counted in
    every file (cleans exactly as the scan's full counter would)."""

    def __init__(self, corpus: CorpusCleaner) -> None:
        super().__init__(corpus.rules, cache_chars=0)
        self.files = corpus.files
        self._seen = Counter(dict.fromkeys(corpus.boilerplate, corpus.files))


def _fingerprints(batch: dict[str, Any], options: Any) -> dict[str, Any]:
    """Scan: each file's distinct paragraph digests, concatenated (ok=False when it can't
    load)."""
    found, oks, seconds = [], [], []
    for path, root in zip(batch["path"], batch["root"], strict=True):
        clock = time.perf_counter()
        try:
            folder = Path(root) if root else None
            loader = loader_for(Path(path), folder, options.max_file_bytes, options.cleaning)
            texts = [d.page_content for d in loader.lazy_load()]
            fps = {fp for text in texts for _s, _e, fp in paragraphs(text)}
            found.append(b"".join(sorted(fps)))
            oks.append(True)
        except Exception:  # the split names the failure
            found.append(b"")
            oks.append(False)
        seconds.append(time.perf_counter() - clock)
    return {"path": list(batch["path"]), "digests": found, "ok": oks, "scan_s": seconds}


def text_hashes(texts: list[str]) -> Any:
    """The first 8 bytes of each text's sha256 (the embedding cache's key), as uint64."""
    import numpy as np

    return np.array(
        [int.from_bytes(hashlib.sha256(t.encode()).digest()[:8], "big") for t in texts],
        dtype=np.uint64,
    )


def _in_sorted(values: Any, table: Any) -> Any:
    import numpy as np

    if len(table) == 0 or len(values) == 0:
        return np.zeros(len(values), dtype=bool)
    at = np.minimum(np.searchsorted(table, values), len(table) - 1)
    return table[at] == values


def _split(
    batch: dict[str, Any], options: Any, model: str, corpus: Any, cached: Any
) -> dict[str, list]:
    """Split: per file a header row (``seq`` -1: chunk count, error or cleaning counts) and
    one row per chunk (``seq`` i: the pickled Document; ``text`` the embedded text when it
    must be embedded, else "")."""
    from ragingest.vectorstore.store import EMBED_KEY

    clock = time.perf_counter()  # the first file's time includes building the splitter
    splitter = _splitter(model, json.dumps(options.split.recorded(), sort_keys=True))
    names = ("path", "seq", "count", "blob", "text", "split_s", "pid")
    out: dict[str, list] = {k: [] for k in names}
    pid = os.getpid()

    def row(path: str, seq: int, count: int, blob: bytes, text: str, seconds: float) -> None:
        for key, value in zip(out, (path, seq, count, blob, text, seconds, pid), strict=True):
            out[key].append(value)

    seen: set[str] = set()
    for path, root in zip(batch["path"], batch["root"], strict=True):
        chunks: list[Any] = []
        try:
            chunks = split_file(
                Path(path),
                Path(root) if root else None,
                splitter,
                options.max_file_bytes,
                cleaning=options.cleaning,
                content_types=options.content_types,
                corpus=corpus,
            )
            header: tuple[Any, Any] = (None, chunks.cleaning)
        except FileError as exc:
            header = ((type(exc), exc.path, exc.reason), None)
        except Exception as exc:  # split_file wraps its own; the driver's split names it
            header = ((None, path, f"{type(exc).__name__}: {exc}"), None)
        texts = [doc.metadata.get(EMBED_KEY, doc.page_content) for doc in chunks]
        known = _in_sorted(text_hashes(texts), cached)
        count = len(chunks)
        row(path, -1, count, pickle.dumps(header), "", time.perf_counter() - clock)
        clock = time.perf_counter()
        for i, (doc, text) in enumerate(zip(chunks, texts, strict=True)):
            need = not known[i] and text not in seen
            seen.add(text)
            row(path, i, count, pickle.dumps(doc), text if need else "", 0.0)
    return out


class EmbedActor:
    """Embed: one model per actor, loaded in a thread from the start (while the first files
    are split), used on the first text to embed; torch threads = the actor's CPU share. Rows
    without a text pass through with an empty vector."""

    def __init__(self, model: str, fingerprint: str, threads: int, batch_size: int) -> None:
        import concurrent.futures

        import torch

        torch.set_num_threads(max(1, threads))
        self.model, self.fingerprint, self.batch_size = model, fingerprint, batch_size
        self.embeddings: Any = None
        self.load_s = 0.0
        self.pool = concurrent.futures.ThreadPoolExecutor(1)
        self.loading = self.pool.submit(self._load)

    def _load(self) -> Any:
        from ragingest.vectorstore.embeddings import SentenceTransformerEmbeddings

        clock = time.perf_counter()
        embeddings = SentenceTransformerEmbeddings(self.model, batch_size=self.batch_size)
        if embeddings.info.fingerprint != self.fingerprint:
            raise RuntimeError(
                f"model {self.model!r} on this Ray node has fingerprint "
                f"{embeddings.info.fingerprint}, the driver's is {self.fingerprint}"
            )
        self.load_s = time.perf_counter() - clock
        return embeddings

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        import numpy as np

        texts = [str(t) for t in batch["text"]]
        todo = list(dict.fromkeys(t for t in texts if t))
        load_s = embed_s = 0.0
        vectors: dict[str, bytes] = {}
        if todo:
            if self.embeddings is None:
                self.embeddings = self.loading.result()  # raises the load's error
                load_s = self.load_s
            clock = time.perf_counter()
            found = np.asarray(self.embeddings.embed_documents(todo), dtype="<f4")
            vectors = {t: v.tobytes() for t, v in zip(todo, found, strict=True)}
            embed_s = time.perf_counter() - clock
        out = dict(batch)
        out["vector"] = [vectors.get(t, b"") for t in texts]
        out["embed_s"] = [embed_s] + [0.0] * (len(texts) - 1)
        out["load_s"] = [load_s] + [0.0] * (len(texts) - 1)
        return out


# -- driver side -------------------------------------------------------------------------------
class Precomputed:
    """The embedding cache's model slot during a Ray run: serves the vectors Ray computed
    (put in per file, forgotten once written), embeds anything else with the real model
    (loaded only then)."""

    def __init__(self, fallback: Any) -> None:
        self.vectors: dict[str, list[float]] = {}
        self.fallback = fallback
        self.computed = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        missing = [t for t in texts if t not in self.vectors]
        if missing:
            self.vectors.update(zip(missing, self.fallback().embed_documents(missing), strict=True))
        self.computed += len(texts)
        return [self.vectors[t] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.fallback().embed_query(text)

    @property
    def info(self) -> Any:  # the splitter of a file split on the driver asks for the tokenizer
        return self.fallback().info


def actor_count(ray: Any, requested: int | None) -> int:
    if requested:
        return requested
    cpus = ray.cluster_resources().get("CPU", 1)
    return max(1, int(cpus))  # half the CPUs at 0.5 each: the rest for map tasks


def cached_hashes(embeddings: Any) -> Any:
    """Sorted uint64 hashes of the texts in the embedding cache for this model (8 bytes per
    text, read straight from the cache's key index): the split skips them. Empty when the
    cache is not the SQLite store (then every text is embedded on Ray; still correct)."""
    import numpy as np

    store = getattr(getattr(embeddings, "document_embedding_store", None), "store", None)
    path = getattr(store, "path", None)
    if path is None or not Path(path).is_file():
        return np.zeros(0, dtype=np.uint64)
    prefix = f"{embeddings.fingerprint}:"
    end = prefix[:-1] + chr(ord(prefix[-1]) + 1)
    with contextlib.closing(sqlite3.connect(str(path), timeout=60)) as connection:
        rows = connection.execute(
            "SELECT substr(key, ?, 16) FROM byte_store WHERE key >= ? AND key < ?",
            (len(prefix) + 1, prefix, end),
        )
        hashes = np.fromiter((int(h, 16) for (h,) in rows), dtype=np.uint64)
    hashes.sort()
    return hashes


def _failed(exc: BaseException) -> RagIngestError:
    first = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
    return RagIngestError(
        f"the Ray engine failed ({type(exc).__name__}: {first}); the files written before it "
        "keep their chunks and states, the others are as before: run again"
    )


@contextlib.contextmanager
def _data_context(progress: bool) -> Iterator[None]:
    """Rows in input order (files reach the driver in walk order), no progress bars unless
    asked, and Ray Data's per-dataset INFO lines only with progress."""
    from ray.data import DataContext

    context = DataContext.get_current()
    saved = (context.execution_options.preserve_order, context.enable_progress_bars)
    loggers = {
        logging.getLogger("ray.data"): logging.WARNING,
        logging.getLogger("ray.data._internal.progress"): logging.ERROR,  # "bars disabled"
    }
    levels = {logger: logger.level for logger in loggers}
    context.execution_options.preserve_order = True
    context.enable_progress_bars = progress
    if not progress:
        for logger, level in loggers.items():
            logger.setLevel(level)
    try:
        yield
    finally:
        context.execution_options.preserve_order, context.enable_progress_bars = saved
        for logger, level in levels.items():
            logger.setLevel(level)


class RayRun(_Run):
    """``pipeline._Run`` fed by a streaming Ray Data pipeline: ``_split`` takes each file's
    chunks (and their vectors) from the stream, ``_write`` is the local engine's."""

    def _update(self, known: dict[str, Any]) -> None:
        o = self.options
        todo = self._todo(known)
        self.corpus: CorpusCleaner | None = None
        self.sent: set[str] = set()
        self.stats: RayStats | None = None
        if not todo:
            super()._update(known)
            return
        from ragingest.ingest.ray_env import ray_runtime

        busy = ("write", "wait", "scan_busy", "split_busy", "embed_busy", "model_load")
        self.stats = RayStats(files=len(todo), seconds=dict.fromkeys(busy, 0.0))
        self.partial: dict[str, dict[str, Any]] = {}
        self.ready: dict[str, dict[str, Any]] = {}
        self.split_pids: set[int] = set()
        self.precomputed = Precomputed(functools.cache(self.embeddings.lazy._factory))
        self.embeddings.lazy._embeddings = self.precomputed
        with contextlib.ExitStack() as stack:
            try:
                clock = time.perf_counter()
                ray = stack.enter_context(ray_runtime(o.ray_address))
                stack.enter_context(_data_context(o.progress))
                self.stats.seconds["start"] = time.perf_counter() - clock
                self._start(ray, todo)
            except Exception as exc:
                raise _failed(exc) from exc
            super()._update(known)
            for _row in self._rows():  # rows nobody asked for (a file gone meanwhile)
                pass
        LAST_STATS.__dict__.update(self.stats.__dict__)
        s = self.stats
        log.info("ray: %d files, %d chunks, %d embedded", s.files, s.chunks, s.texts_embedded)

    def _todo(self, known: dict[str, Any]) -> list[Any]:
        """The files ``_Run._update`` will split, in its order."""
        o = self.options
        todo = []
        for found in walk(self.paths, o.include, o.exclude):
            try:
                loader_for(found.path, found.root, o.max_file_bytes)
            except UnsupportedFormatError:
                continue
            except Exception:
                pass
            stamp = _stamp(found.path, o.max_file_bytes)
            state = known.get(found.source)
            if stamp and state and state.stamp == stamp and state.version == STATE_VERSION:
                continue
            todo.append(found)
        return todo

    def _start(self, ray: Any, todo: list[Any]) -> None:
        """The boilerplate scan (a barrier), then the streaming pipeline."""
        from ray.data import ActorPoolStrategy, TaskPoolStrategy

        o, stats = self.options, self.stats
        rows = [{"path": str(f.path), "root": str(f.root) if f.root else ""} for f in todo]
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        per_block = max(1, min(MAX_FILES_PER_BLOCK, len(rows) // (cpus * 16)))
        blocks = math.ceil(len(rows) / per_block)

        clock = time.perf_counter()
        if o.cleaning.boilerplate:
            corpus = CorpusCleaner(o.cleaning)
            scan = ray.data.from_items(rows, override_num_blocks=blocks).map_batches(
                _fingerprints, fn_kwargs={"options": o}, num_cpus=ACTOR_CPUS
            )
            for batch in scan.iter_batches(batch_size=None):
                stats.seconds["scan_busy"] += float(sum(batch["scan_s"]))
                for ok, digests in zip(batch["ok"], batch["digests"], strict=True):
                    if ok:  # counted as the local scan counts (by digest)
                        corpus.files += 1
                        corpus._seen.update(
                            digests[i : i + DIGEST] for i in range(0, len(digests), DIGEST)
                        )
            self.corpus = BoilerplateDigests(corpus)
        stats.seconds["scan"] = time.perf_counter() - clock

        self.clock = time.perf_counter()
        cached = cached_hashes(self.embeddings)
        actors = min(actor_count(ray, o.ray_actors), len(rows))
        memory = ray.cluster_resources().get("memory")
        if memory:  # an actor that can't get its memory would stall the pool
            actors = max(1, min(actors, int(memory // ACTOR_MEMORY)))
        stats.actors = actors
        # split tasks on the CPUs the actors leave: no more worker processes (each builds a
        # splitter, ~4 s of tokenizer loading) than can run at once
        slots = max(1, int((cpus - actors * ACTOR_CPUS) / ACTOR_CPUS))
        name = self.embeddings.model_name
        dataset = (
            ray.data.from_items(rows, override_num_blocks=blocks)
            .map_batches(
                _split,
                fn_kwargs={"options": o, "model": name, "corpus": self.corpus, "cached": cached},
                compute=TaskPoolStrategy(size=slots),
                num_cpus=ACTOR_CPUS,
            )
            .map_batches(
                EmbedActor,
                fn_constructor_kwargs={
                    "model": name,
                    "fingerprint": self.embeddings.fingerprint,
                    "threads": max(1, int(ACTOR_CPUS)),
                    "batch_size": o.batch_size,
                },
                batch_size=o.batch_size,
                compute=ActorPoolStrategy(size=actors),
                num_cpus=ACTOR_CPUS,
                memory=ACTOR_MEMORY,  # also keeps the split tasks apart (no operator fusion)
            )
        )
        self.sent = {row["path"] for row in rows}
        self.stream = iter(dataset.iter_rows())

    def _rows(self) -> Iterator[dict[str, Any]]:
        """The pipeline's next rows; a Ray failure becomes a clear ``RagIngestError``."""
        while True:
            clock = time.perf_counter()
            try:
                row = next(self.stream)
            except StopIteration:
                return
            except Exception as exc:
                raise _failed(exc) from exc
            finally:
                self.stats.seconds["wait"] += time.perf_counter() - clock
            yield row

    def _receive(self, path: str) -> dict[str, Any] | None:
        """Take rows until ``path``'s are all in (rows come in walk order)."""
        stats = self.stats
        rows = self._rows()
        while path not in self.ready:
            row = next(rows, None)
            if row is None:
                break
            key = str(row["path"])
            got = self.partial.setdefault(key, {"count": int(row["count"]), "docs": {}})
            seq = int(row["seq"])
            if seq < 0:
                got["header"] = pickle.loads(row["blob"])
                stats.seconds["split_busy"] += float(row["split_s"])
                self.split_pids.add(int(row["pid"]))
                stats.split_workers = len(self.split_pids)
            else:
                vector = row["vector"]
                got["docs"][seq] = (pickle.loads(row["blob"]), str(row["text"]), vector)
                if vector:
                    stats.texts_embedded += 1
            stats.seconds["embed_busy"] += float(row["embed_s"])
            stats.seconds["model_load"] += float(row["load_s"])
            buffered = len(self.partial) + len(self.ready)
            stats.max_buffered_files = max(stats.max_buffered_files, buffered)
            if "header" in got and len(got["docs"]) == got["count"]:
                self.ready[key] = self.partial.pop(key)
        return self.ready.pop(path, None)

    def _scan(self, files: list[Any], known: dict[str, Any]) -> CorpusCleaner | None:
        return self.corpus

    def _split(self, found: Any, corpus: CorpusCleaner | None) -> Any:
        import numpy as np

        key = str(found.path)
        got = self._receive(key) if key in self.sent else None
        if key in self.sent:
            self.sent.discard(key)
            if not self.sent:
                self.stats.seconds["pipeline"] = time.perf_counter() - self.clock
        if got is None:  # not sent to Ray (changed since the walk): split here
            return super()._split(found, corpus)
        error, cleaning = got["header"]
        if error is not None:
            kind, path, reason = error
            if isinstance(kind, type) and issubclass(kind, FileError):
                raise kind(path, reason)
            return super()._split(found, corpus)  # not a FileError: the local split says why
        chunks = ChunkList()
        chunks.cleaning = cleaning
        for seq in range(got["count"]):
            doc, text, vector = got["docs"][seq]
            if vector:
                self.precomputed.vectors[text] = np.frombuffer(vector, dtype="<f4").tolist()
            chunks.append(doc)
        self.stats.chunks += len(chunks)
        return chunks

    def _write(self, group: list[Any]) -> None:
        if not group or self.stats is None:
            return super()._write(group)
        clock = time.perf_counter()
        super()._write(group)
        seconds = self.stats.seconds
        seconds["write"] += time.perf_counter() - clock
        self.stats.groups += 1
        if self.stats.groups == 1:
            seconds["first_write"] = time.perf_counter() - self.clock
        from ragingest.vectorstore.store import EMBED_KEY

        for _source, _file_stamp, chunks in group:  # written: the cache has them now
            for doc in chunks:
                self.precomputed.vectors.pop(doc.metadata.get(EMBED_KEY, doc.page_content), None)
