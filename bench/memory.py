"""Peak RSS of ``ingest`` over a generated corpus (100 MB; ``--quick``: 10 MB), goal ≤ 1.5 GB
including the model, measured in a child process as its ``VmHWM`` (the peak RSS of its own
address space: ``ru_maxrss`` would carry the benchmark parent's peak over fork and exec).

Embedding 100 MB on a CPU takes hours, so the child loads the real model and runs one real
forward pass at full batch size over the longest texts of the first batch (the activation
peak), then replaces ``encode`` by a stub that returns deterministic unit vectors. Everything
else — walking, loading, splitting, the embedding cache, the record manager, Chroma with its
HNSW index — runs for real over the whole corpus, which is what must stream.

``python -m bench.memory CORPUS PERSIST_DIR`` is the child.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import write_large_corpus

CORPUS_CACHE = Path(tempfile.gettempdir()) / "ragingest-bench-corpus"


def run(quick: bool, say: Any = print, backend: str | None = None) -> dict[str, Any]:
    from ragingest.models.locate import backend_name

    backend = backend_name(backend)
    megabytes = 10 if quick else 100
    corpus = CORPUS_CACHE / f"{megabytes}mb"
    written = write_large_corpus(corpus, megabytes)
    persist = Path(tempfile.mkdtemp(prefix="ragingest-bench-mem-"))
    try:
        command = [sys.executable, "-m", "bench.memory", str(corpus), str(persist)]
        started = time.perf_counter()
        env = {**os.environ, "RAGINGEST_BACKEND": backend}
        child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
        out = child.stdout.read() if child.stdout else ""
        code = child.wait()
        seconds = time.perf_counter() - started
        if code != 0:
            raise RuntimeError(f"memory child failed: {out[-2000:]}")
        report = json.loads(out.strip().splitlines()[-1])
        peak_mb = report.pop("peak_rss_mb")
        result = {
            "backend": backend,
            "corpus_mb": round(written / 1e6, 1),
            "peak_rss_mb": round(peak_mb, 1),
            "seconds": round(seconds, 1),
            **report,
        }
        say(
            f"memory ({backend}): {result['corpus_mb']} MB, {report['chunks']} chunks → peak RSS "
            f"{peak_mb:.0f} MB (after the model and one real batch: "
            f"{report['rss_after_real_batch_mb']} MB), {seconds:.0f} s"
        )
        return result
    finally:
        shutil.rmtree(persist, ignore_errors=True)


def _rss_mb() -> float:
    """Peak RSS of this process's address space so far (VmHWM; Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _child(corpus: Path, persist: Path) -> None:
    import numpy as np

    from ragingest.models.resolve import load_model_info, load_sentence_transformer
    from ragingest.pipeline.runner import IngestOptions, ingest

    info = load_model_info(None)
    model = load_sentence_transformer(None)
    real = model.encode
    state: dict[str, Any] = {"real_done": False, "texts": 0}

    def encode(texts: list[str], *args: Any, **kwargs: Any) -> Any:
        state["texts"] += len(texts)
        if not state["real_done"]:
            state["real_done"] = True
            batch = kwargs.get("batch_size", 64)
            longest = sorted(texts, key=len, reverse=True)[:batch]
            real(longest, *args, **kwargs)  # one real forward pass: the activation peak
            state["rss_after_real_batch_mb"] = round(_rss_mb(), 1)
        rows = np.empty((len(texts), dim), dtype=np.float32)
        for i, text in enumerate(texts):
            rng = np.random.default_rng(abs(hash(text)) % (1 << 63))
            rows[i] = rng.standard_normal(dim)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)

    from ragingest.pipeline import engine_local

    scan = engine_local.scan_corpus

    def timed_scan(*args: Any, **kwargs: Any) -> Any:  # the boilerplate scan's share
        corpus = scan(*args, **kwargs)
        state["rss_after_scan_mb"] = round(_rss_mb(), 1)
        return corpus

    engine_local.scan_corpus = timed_scan
    dim = int(real(["warm up"], prompt=info.document_prompt or None).shape[-1])
    state["rss_after_model_mb"] = round(_rss_mb(), 1)
    model.encode = encode
    started = time.perf_counter()
    report = ingest([corpus], IngestOptions(persist, "memory"))
    print(
        json.dumps(
            {
                "chunks": report.added,
                "files": len(report.files),
                "embedded_texts": state["texts"],
                "rss_after_model_mb": state["rss_after_model_mb"],
                "rss_after_scan_mb": state.get("rss_after_scan_mb"),
                "rss_after_real_batch_mb": state.get("rss_after_real_batch_mb"),
                "ingest_seconds": round(time.perf_counter() - started, 1),
                "peak_rss_mb": round(_rss_mb(), 1),
            }
        )
    )


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    _child(Path(sys.argv[1]), Path(sys.argv[2]))
