"""The Ray engine's worker side: the scan and split map functions and the embedding actor.

Rows between the stages (Ray Data batches of plain columns):

- scan: ``{"path", "root", "identity"}`` in → ``{"path", "digests", "ok", "scan_s"}`` out: the
  pickled ``(task name, FileDigest)`` of a file (``loaders.cleaning.corpus``: block digests,
  not text), ``ok`` False when it can't load (the split names the failure);
- split: ``{"path", "root", "source", "base", "identity", "access"}`` in (``access``: the
  file's readers as JSON, "" without a policy) → per file a header row (``seq`` -1, ``count``
  its records, ``blob`` the pickled ``(error, (cleaning, notes, lost, removed, copies))``)
  then one row per record (``seq`` i, ``blob`` the pickled ``ChunkRecord``, ``text`` its
  embedded text when it must be embedded: not in the cache snapshot ``cached`` and not
  earlier in the same batch, else "");
- embed: adds ``vector`` (float32 little-endian bytes; empty where ``text`` is).

Scan and split parse each file through the worker process's ``ParserPool`` (the run's
``--file-timeout`` and ``--file-memory-mb``), as the local engine does: a file past a bound
fails with the same error and the batch goes on. Each reads only the file the walk checked:
``identity`` is the walk's ``FileIdentity.as_text()`` ("" for none), compared in full on the
driver's machine (``host``) and without its device number elsewhere
(``FileIdentity.elsewhere``).
"""

from __future__ import annotations

import atexit
import concurrent.futures
import functools
import json
import os
import pickle
import socket
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragingest.errors import FileError
from ragingest.loaders.cleaning.corpus import FileDigest, document_pages
from ragingest.loaders.inputs.identity import FileIdentity
from ragingest.loaders.process.bounded import ParserPool
from ragingest.pipeline.plan import FileTask
from ragingest.pipeline.split import Splitting, split_task
from ragingest.splitters.base import ChunkSplitter
from ragingest.splitters.factory import SplitSettings, base_splitter

if TYPE_CHECKING:  # the type only: a Ray worker never builds the options
    import numpy as np

    from ragingest.loaders.cleaning.corpus import CorpusCleaner
    from ragingest.models.embeddings import SentenceTransformerEmbeddings
    from ragingest.pipeline.options import IngestOptions

SPLIT_COLUMNS = ("path", "seq", "count", "blob", "text", "split_s", "pid")


@functools.cache
def worker_splitter(model: str, settings_json: str) -> ChunkSplitter:
    """The base splitter of one model and settings, built once per worker process."""
    from ragingest.models.embeddings import SentenceTransformerEmbeddings

    settings = SplitSettings.from_recorded(json.loads(settings_json))
    return base_splitter(settings, info=SentenceTransformerEmbeddings(model).info)


def worker_parsers(options: IngestOptions, run: str = "") -> ParserPool:
    """This worker process's parser pool for the run's bounds, started on first use and kept
    for its later batches (a fresh parser process costs an interpreter and the loader
    imports); it ends with the process. Files that ran past a bound in another ``run`` are
    tried again."""
    pool = _parsers(options.file_timeout, options.file_memory_mb)
    if _RUNS.get(id(pool)) != run:
        pool.forget()
        _RUNS[id(pool)] = run
    return pool


_RUNS: dict[int, str] = {}  # the run each pool of this process last served


@functools.cache
def _parsers(timeout: float | None, memory_mb: int | None) -> ParserPool:
    pool = ParserPool(timeout, memory_mb)
    atexit.register(pool.close)
    return pool


def task_rows(tasks: Sequence[FileTask]) -> list[dict[str, str]]:
    """The rows the scan and the split read (module docstring), one a task (``_task`` reads
    one back)."""
    return [
        {
            "path": t.name,
            "root": str(t.root) if t.root else "",
            "source": t.source,
            "base": str(t.base) if t.base else "",
            "identity": t.identity.as_text() if t.identity else "",  # only it is read
            "access": json.dumps(t.access) if t.access is not None else "",  # "": no policy
        }
        for t in tasks
    ]


def _task(
    path: str,
    root: str,
    source: str,
    base: str = "",
    identity: str = "",
    host: str = "",
    access: str = "",
) -> FileTask:
    walked = FileIdentity.from_text(identity)
    if walked is not None and host != socket.gethostname():
        walked = walked.elsewhere()
    return FileTask(
        source,
        Path(path),
        Path(root) if root else None,
        base=Path(base) if base else None,
        identity=walked,
        access=tuple(json.loads(access)) if access else None,
    )


def _identities(batch: dict[str, Any]) -> list[str]:
    return list(batch["identity"]) if "identity" in batch else [""] * len(batch["path"])


def scan_batch(
    batch: dict[str, Any], options: IngestOptions, run: str = "", host: str = ""
) -> dict[str, Any]:
    """Scan: each file's ``FileDigest`` (see the module docstring)."""
    parsers = worker_parsers(options, run)
    found, oks, seconds = [], [], []
    for path, root, identity in zip(batch["path"], batch["root"], _identities(batch), strict=True):
        clock = time.perf_counter()
        try:
            task = _task(path, root, "", identity=identity, host=host)
            loaded = task.load(options.max_file_bytes, options.cleaning, parsers)
            found.append(pickle.dumps((task.name, FileDigest.of(document_pages(loaded)))))
            oks.append(True)
        except Exception:  # the split names the failure
            found.append(b"")
            oks.append(False)
        seconds.append(time.perf_counter() - clock)
    return {"path": list(batch["path"]), "digests": found, "ok": oks, "scan_s": seconds}


def in_sorted(values: np.ndarray, table: np.ndarray) -> np.ndarray:
    """For each of ``values``, whether the sorted ``table`` holds it."""
    import numpy as np

    if len(table) == 0 or len(values) == 0:
        return np.zeros(len(values), dtype=bool)
    at = np.minimum(np.searchsorted(table, values), len(table) - 1)
    return table[at] == values


def split_batch(
    batch: dict[str, Any],
    options: IngestOptions,
    model: str,
    corpus: CorpusCleaner | None,
    cached: np.ndarray,
    run: str = "",
    host: str = "",
) -> dict[str, list]:
    """Split: a header row and the record rows of each file (see the module docstring)."""
    from ragingest.vectorstore.cache import text_hashes

    clock = time.perf_counter()  # the first file's time includes building the splitter
    base = worker_splitter(model, json.dumps(options.split.recorded(), sort_keys=True))
    splitting = Splitting(
        options.split,
        lambda: base,
        options.max_file_bytes,
        options.cleaning,
        options.content_types,
        worker_parsers(options, run),
        max_chunks=options.max_chunks_per_file,
    )
    out: dict[str, list] = {k: [] for k in SPLIT_COLUMNS}
    pid = os.getpid()

    def row(path: str, seq: int, count: int, blob: bytes, text: str, seconds: float) -> None:
        for key, value in zip(out, (path, seq, count, blob, text, seconds, pid), strict=True):
            out[key].append(value)

    seen: set[str] = set()
    bases = batch["base"] if "base" in batch else [""] * len(batch["path"])  # "": the root
    identities = _identities(batch)
    readers = batch["access"] if "access" in batch else [""] * len(batch["path"])
    rows = zip(batch["path"], batch["root"], batch["source"], bases, identities, readers,
               strict=True)  # fmt: skip
    for path, root, source, source_base, identity, access in rows:
        records: list[Any] = []
        try:
            task = _task(path, root, source, source_base, identity, host, str(access))
            chunks = split_task(task, splitting, corpus)
            records = list(chunks)
            kept = (chunks.cleaning, chunks.notes, chunks.lost, chunks.removed, chunks.copies)
            header: tuple[Any, Any] = (None, kept)
        except FileError as exc:
            header = ((type(exc), exc.path, exc.reason), None)
        except Exception as exc:  # split_task wraps its own; the driver's split names it
            header = ((None, path, f"{type(exc).__name__}: {exc}"), None)
        texts = [record.embed_text for record in records]
        known = in_sorted(text_hashes(texts), cached)
        count = len(records)
        row(path, -1, count, pickle.dumps(header), "", time.perf_counter() - clock)
        clock = time.perf_counter()
        for i, (record, text) in enumerate(zip(records, texts, strict=True)):
            need = not known[i] and text not in seen
            seen.add(text)
            row(path, i, count, pickle.dumps(record), text if need else "", 0.0)
    return out


class EmbedActor:
    """Embed: one model per actor, loaded in a thread from the start (while the first files
    are split), used on the first text to embed; torch threads = the actor's CPU share. Rows
    without a text pass through with an empty vector."""

    def __init__(self, model: str, fingerprint: str, threads: int, batch_size: int) -> None:
        try:
            import torch
        except ImportError:  # the ONNX backend without the [torch] extra: the same cap
            os.environ["OMP_NUM_THREADS"] = str(max(1, threads))  # (onnx_backend.omp_threads)
        else:
            torch.set_num_threads(max(1, threads))
        self.model, self.fingerprint, self.batch_size = model, fingerprint, batch_size
        self.embeddings: Any = None
        self.load_s = 0.0
        self.pool = concurrent.futures.ThreadPoolExecutor(1)
        self.loading = self.pool.submit(self._load)

    def _load(self) -> SentenceTransformerEmbeddings:
        from ragingest.models.embeddings import SentenceTransformerEmbeddings

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
