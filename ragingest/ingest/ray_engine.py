"""``ingest --engine ray``: the local engine's stages as Ray Data operations.

The driver lists the files and checks their states exactly as the local engine does; only new
or changed files go to Ray:

1. boilerplate scan (cleaning rule ``boilerplate``): map tasks load each file and return its
   paragraph fingerprints; the driver counts them (``CorpusCleaner``), as the local scan does;
2. load + normalize + split: map tasks run ``split_file`` (the splitter, with the model's
   tokenizer, is built once per worker process);
3. embed: the texts missing from the embedding cache go through an actor pool; each actor
   loads the model once and sets its torch threads to its CPU share (``num_cpus=0.5`` each by
   default: no oversubscription, and no deadlock of whole-CPU actors beside a task);
4. write: the driver feeds the chunks and their vectors into the local engine's write path
   (``pipeline._Run``: the same lock, model/settings guard, journal, ``index()`` with the
   record manager, file states, run log). The vectors reach it through the embedding cache's
   model slot, so the cache is filled exactly as by a local run.

So re-index semantics are the local engine's: a re-run over unchanged input parses and embeds
nothing (Ray is not even started). Ray retries a task or actor whose worker died
(``max_retries``, ``max_restarts``); a run that still fails leaves the collection as a killed
local run would, and the next run converges.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import pickle
import time
from dataclasses import dataclass, field
from typing import Any

from ragingest.errors import RagIngestError
from ragingest.ingest.pipeline import STATE_VERSION, _Run, _stamp, split_file
from ragingest.loaders import walk
from ragingest.loaders.cleaning import CorpusCleaner, paragraphs

log = logging.getLogger(__name__)

ACTOR_CPUS = 0.5  # CPU share of one embedding actor
TASK_RETRIES = 3  # a map task whose worker died is run again
ACTOR_RESTARTS = 3


@dataclass
class RayStats:
    """Seconds per stage of the last Ray run (the bench and docs/scaling.md read them)."""

    files: int = 0
    chunks: int = 0
    texts_embedded: int = 0
    actors: int = 0
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


def _fingerprints(batch: dict[str, Any], options: Any) -> dict[str, Any]:
    """Stage 1: each file's paragraph fingerprints (empty + ok=False when it can't load)."""
    from pathlib import Path

    from ragingest.loaders import loader_for

    found, oks = [], []
    for path, root in zip(batch["path"], batch["root"], strict=True):
        try:
            folder = Path(root) if root else None
            loader = loader_for(Path(path), folder, options.max_file_bytes, options.cleaning)
            texts = [d.page_content for d in loader.lazy_load()]
            fps = sorted({fp for text in texts for _s, _e, fp in paragraphs(text)})
            found.append(json.dumps(fps))
            oks.append(True)
        except Exception:  # the split names the failure
            found.append("[]")
            oks.append(False)
    return {"path": list(batch["path"]), "fps": found, "ok": oks}


def _split(batch: dict[str, Any], options: Any, model: str, corpus: Any) -> dict[str, Any]:
    """Stage 2: each file's chunks, pickled (None when it failed: the driver names why)."""
    from pathlib import Path

    splitter = _splitter(model, json.dumps(options.split.recorded(), sort_keys=True))
    blobs = []
    for path, root in zip(batch["path"], batch["root"], strict=True):
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
            blobs.append(pickle.dumps(chunks))
        except Exception:
            blobs.append(None)
    return {"path": list(batch["path"]), "blob": blobs}


class EmbedActor:
    """Stage 3: one model per actor, torch threads = the actor's CPU share."""

    def __init__(self, model: str, fingerprint: str, threads: int, batch_size: int) -> None:
        import torch

        from ragingest.vectorstore.embeddings import SentenceTransformerEmbeddings

        torch.set_num_threads(max(1, threads))
        self.embeddings = SentenceTransformerEmbeddings(model, batch_size=batch_size)
        if self.embeddings.info.fingerprint != fingerprint:
            raise RuntimeError(
                f"model {model!r} on this Ray node has fingerprint "
                f"{self.embeddings.info.fingerprint}, the driver's is {fingerprint}"
            )

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        import numpy as np

        texts = [str(t) for t in batch["text"]]
        vectors = np.asarray(self.embeddings.embed_documents(texts), dtype="float32")
        return {"text": texts, "vector": list(vectors)}


# -- driver side -------------------------------------------------------------------------------
class Precomputed:
    """The embedding cache's model slot during a Ray run: serves the vectors Ray computed,
    embeds anything else with the real model (loaded only then)."""

    def __init__(self, vectors: dict[str, list[float]], fallback: Any) -> None:
        self.vectors = vectors
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
    def info(self) -> Any:  # the splitter of a file that failed on Ray asks for the tokenizer
        return self.fallback().info


def actor_count(ray: Any, requested: int | None) -> int:
    if requested:
        return requested
    cpus = ray.cluster_resources().get("CPU", 1)
    return max(1, int(cpus))  # half the CPUs at 0.5 each: the rest for map tasks


class RayRun(_Run):
    """``pipeline._Run`` with stages 1–3 on Ray; writes go through ``_Run`` unchanged."""

    presplit: dict[str, Any]

    def _update(self, known: dict[str, Any]) -> None:
        o = self.options
        files = list(walk(self.paths, o.include, o.exclude))
        todo = []
        for found in files:
            stamp = _stamp(found.path, o.max_file_bytes)
            state = known.get(found.source)
            if stamp and state and state.stamp == stamp and state.version == STATE_VERSION:
                continue
            todo.append(found)
        self.presplit = {}
        self.corpus: CorpusCleaner | None = None
        if todo:
            from ragingest.ingest.ray_env import ray_runtime

            try:
                with ray_runtime(o.ray_address) as ray:
                    self._on_ray(ray, todo)
            except Exception as exc:
                first = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
                raise RagIngestError(
                    f"the Ray engine failed ({type(exc).__name__}: {first}); nothing of this "
                    "run was written, the collection is as before: run again"
                ) from exc
        super()._update(known)

    def _scan(self, files: list[Any], known: dict[str, Any]) -> CorpusCleaner | None:
        return self.corpus

    def _split(self, found: Any, corpus: CorpusCleaner | None) -> Any:
        chunks = self.presplit.get(str(found.path))
        if chunks is not None:
            return chunks
        return super()._split(found, corpus)  # failed on Ray: the local split names why

    def _on_ray(self, ray: Any, todo: list[Any]) -> None:
        o = self.options
        stats = RayStats(files=len(todo))
        clock = time.perf_counter()
        rows = [{"path": str(f.path), "root": str(f.root) if f.root else ""} for f in todo]
        name = self.embeddings.model_name
        parallel = max(1, min(len(rows), int(ray.cluster_resources().get("CPU", 1)) * 2))
        remote = {"num_cpus": ACTOR_CPUS, "max_retries": TASK_RETRIES}

        corpus = None
        if o.cleaning.boilerplate:
            corpus = CorpusCleaner(o.cleaning)
            scanned = (
                ray.data.from_items(rows, override_num_blocks=parallel)
                .map_batches(_fingerprints, fn_kwargs={"options": o}, batch_size=4, **remote)
                .take_all()
            )
            by_path = {row["path"]: row for row in scanned}
            for row in rows:  # in walk order, as the local scan
                hit = by_path[row["path"]]
                if hit["ok"]:
                    corpus.files += 1
                    corpus._seen.update(json.loads(hit["fps"]))
        self.corpus = corpus
        stats.seconds["scan"] = time.perf_counter() - clock

        clock = time.perf_counter()
        split = (
            ray.data.from_items(rows, override_num_blocks=parallel)
            .map_batches(
                _split,
                fn_kwargs={"options": o, "model": name, "corpus": corpus},
                batch_size=4,
                **remote,
            )
            .take_all()
        )
        for row in split:
            if row["blob"] is not None:
                self.presplit[row["path"]] = pickle.loads(row["blob"])
        stats.seconds["split"] = time.perf_counter() - clock

        clock = time.perf_counter()
        from ragingest.vectorstore.store import EMBED_KEY

        texts = list(
            dict.fromkeys(
                doc.metadata.get(EMBED_KEY, doc.page_content)
                for chunks in self.presplit.values()
                for doc in chunks
            )
        )
        stats.chunks = sum(len(c) for c in self.presplit.values())
        cached = self.embeddings.document_embedding_store.mget(texts) if texts else []
        missing = [t for t, v in zip(texts, cached, strict=True) if v is None]
        vectors: dict[str, list[float]] = {}
        if missing:
            actors = min(actor_count(ray, o.ray_actors), max(1, math.ceil(len(missing) / 8)))
            threads = max(1, int(ACTOR_CPUS))
            embedded = (
                ray.data.from_items([{"text": t} for t in missing], override_num_blocks=actors * 2)
                .map_batches(
                    EmbedActor,
                    fn_constructor_kwargs={
                        "model": name,
                        "fingerprint": self.embeddings.fingerprint,
                        "threads": threads,
                        "batch_size": o.batch_size,
                    },
                    batch_size=o.batch_size,
                    concurrency=actors,
                    num_cpus=ACTOR_CPUS,
                    max_restarts=ACTOR_RESTARTS,
                    max_task_retries=TASK_RETRIES,
                )
                .take_all()
            )
            vectors = {row["text"]: [float(x) for x in row["vector"]] for row in embedded}
            stats.actors = actors
        stats.texts_embedded = len(vectors)
        stats.seconds["embed"] = time.perf_counter() - clock
        lazy = self.embeddings.lazy
        factory = lazy._factory
        lazy._embeddings = Precomputed(vectors, functools.cache(factory))
        LAST_STATS.__dict__.update(stats.__dict__)
        log.info("ray: %d files, %d chunks, %d embedded", stats.files, stats.chunks, len(vectors))
