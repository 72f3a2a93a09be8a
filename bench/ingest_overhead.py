"""What an ingest costs besides the encoder: the corpus of ``bench.ingest_speed`` ingested with
the model's ``encode`` replaced by a stub (deterministic unit vectors, a hash of each text), in
a fresh process and a fresh directory.

``python -m bench.ingest_overhead [--sets a,b] [--files N] [--repeat 3] [--base DIR]
[--parallel] [--profile] [--top 30] [--pstats FILE] [--keep DIR] [--out FILE]``

Each repeat is one child process (imports included: chromadb's import is part of a run's
cost): the real model is loaded first (outside the clock; its one call gives the dimension),
then ``ingest()`` runs with the stub. By default the files are split on the run's thread (no
prefetch thread), so each stage's process CPU is its own: ``STAGES`` are wrapped with timers
that add up the wall and the process CPU (chromadb's writes run on its own Rust threads) of
each outermost call. ``--parallel`` keeps the prefetch thread, as a real run has it (the
stages' CPU then includes the split running beside them). The child reports the ingest's
wall, its process CPU, the CPU of the run's thread and, for each stage, wall and CPU.
``--base DIR``: another checkout (``git worktree add DIR main``, with the venv linked) run
alternately with this one on the same corpus, for before → after on a busy machine.
``--profile`` adds a cProfile of the run's thread (its top functions; profiling slows Python
code about 1.5-2x: compare profiled runs only with profiled runs); ``--pstats FILE`` keeps
the last profile (``python -m pstats FILE``); ``--keep DIR`` the last store (to compare what
two commits store).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.common import ROOT, median
from bench.ingest_speed import RUSSIAN, write_corpus

# (label, module, attribute path): each outermost call's wall and process CPU add up
STAGES = (
    ("open the backend (chromadb)", "ragingest.pipeline.runner", "open_backend"),
    ("scan for copies", "ragingest.pipeline.engine_local", "scan_corpus"),
    ("split", "ragingest.pipeline.engine_local", "split_outcome"),
    ("embed (cache + stub)", "ragingest.pipeline.writer", "Writer.embed_new"),
    ("write groups", "ragingest.pipeline.writer", "Writer.write"),
    ("  index()", "ragingest.pipeline.writer", "index"),
    ("  store add_documents", "ragingest.vectorstore.collection", "Collection.add_documents"),
    ("    chroma add", "ragingest.vectorstore.chroma.index", "ChromaIndex.add"),
    ("    lexical add", "ragingest.vectorstore.lexical.index", "LexicalIndex.add"),
    ("    parents mset", "ragingest.vectorstore.records.parents", "ParentStore.mset"),
    ("  record manager update", "ragingest.vectorstore.records.record_manager",
     "IndexRecords.update"),
    ("  record manager exists", "ragingest.vectorstore.records.record_manager",
     "IndexRecords.exists"),
    ("  journal", "ragingest.vectorstore.records.record_manager", "IndexRecords.journal"),
    ("  file states put", "ragingest.pipeline.state", "FileStates.put"),
    ("encode (the stub)", "__main__", "encode"),
)  # fmt: skip

CHILD = r"""
import cProfile, functools, importlib, json, pstats, sys, threading, time, zlib
from pathlib import Path
import numpy as np
from ragingest.models.resolve import load_model_info, load_sentence_transformer
corpus, persist = Path(sys.argv[1]), Path(sys.argv[2])
options = json.loads(sys.argv[3])
info = load_model_info(None)
model = load_sentence_transformer(None)
dim = int(model.encode(["warm up"], prompt=info.document_prompt or None).shape[-1])

def encode(texts, *args, **kwargs):
    rows = np.empty((len(texts), dim), dtype=np.float32)
    for i, text in enumerate(texts):
        rows[i] = np.random.default_rng(zlib.crc32(text.encode())).standard_normal(dim)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)

from ragingest.pipeline import engine_local
from ragingest.pipeline.runner import IngestOptions, ingest
if not options["parallel"]:  # split on the run's thread: each stage's CPU is its own
    engine_local.backend_name = lambda *args: "serial"
stages, depth = {}, threading.local()

def timed(label, inner):
    stages[label] = [0.0, 0.0, 0]
    @functools.wraps(inner)
    def call(*args, **kwargs):
        level = getattr(depth, label, 0)
        setattr(depth, label, level + 1)
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            return inner(*args, **kwargs)
        finally:
            setattr(depth, label, level)
            if level == 0:
                row = stages[label]
                row[0] += time.perf_counter() - wall
                row[1] += time.process_time() - cpu
                row[2] += 1
    return call

for label, module, path in options["stages"]:
    owner = sys.modules["__main__"] if module == "__main__" else importlib.import_module(module)
    *outer, name = path.split(".")
    for part in outer:
        owner = getattr(owner, part)
    setattr(owner, name, timed(label, getattr(owner, name)))
model.encode = sys.modules["__main__"].encode
profiler = cProfile.Profile() if options["profile"] else None
wall, cpu, thread = time.perf_counter(), time.process_time(), time.thread_time()
if profiler:
    profiler.enable()
report = ingest([corpus], IngestOptions(persist, "bench"))
if profiler:
    profiler.disable()
out = {"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu,
       "thread_cpu_s": time.thread_time() - thread, "added": report.added, "stages": stages}
if profiler:
    if options["pstats"]:
        profiler.dump_stats(options["pstats"])
    rows = sorted(pstats.Stats(profiler).stats.items(), key=lambda kv: -kv[1][3])
    out["top"] = [[f"{Path(f).parent.name}/{Path(f).name}:{n}", round(ct, 3), round(tt, 3), nc]
                  for (f, _l, n), (_cc, nc, tt, ct, _c) in rows
                  if f != "<string>"][: options["top"]]  # not the stage timers
print(json.dumps(out))
"""


def child(
    corpus: Path, persist: Path, args: argparse.Namespace, code: Path = ROOT
) -> dict[str, Any]:
    """One fresh process of the checkout ``code`` ingesting ``corpus`` into ``persist``;
    what it measured."""
    options = {"parallel": args.parallel, "profile": args.profile or bool(args.pstats),
               "top": args.top, "pstats": str(args.pstats or ""), "stages": STAGES}  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(code)}
    command = [sys.executable, "-c", CHILD, str(corpus), str(persist), json.dumps(options)]
    done = subprocess.run(command, env=env, cwd=code, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"child failed: {done.stderr.strip()[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def run(args: argparse.Namespace, say: Any = print) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="ragingest-overhead-"))
    try:
        corpus = work / "corpus"
        count, size = write_corpus(corpus, args.sets, args.files)
        say(f"ingest overhead (stub encoder): {count} files, {size / 1e6:.2f} MB")
        kinds = [("ours", ROOT)] + ([("base", args.base)] if args.base else [])
        runs: dict[str, list[dict[str, Any]]] = {kind: [] for kind, _code in kinds}
        for r in range(args.repeat):
            for kind, code in kinds[r % len(kinds) :] + kinds[: r % len(kinds)]:
                persist = work / f"{kind}-{r}"
                result = child(corpus, persist, args, code)
                runs[kind].append(result)
                say(
                    f"  {kind} run {r + 1}: wall {result['wall_s']:.2f} s, process CPU "
                    f"{result['cpu_s']:.2f} s, run's thread CPU {result['thread_cpu_s']:.2f} s, "
                    f"{result['added']} added"
                )
                if args.keep and r == args.repeat - 1 and kind == "ours":
                    shutil.rmtree(args.keep, ignore_errors=True)
                    shutil.copytree(persist, args.keep)
        summary: dict[str, Any] = {
            "files": count,
            "bytes": size,
            "mode": ("parallel" if args.parallel else "serial")
            + (" profiled" if args.profile or args.pstats else ""),
            **{kind: _summary(found) for kind, found in runs.items()},
        }
        say(
            f"  {'stage (median)':<30}"
            + "".join(f" {k + ' wall':>10} {k + ' CPU':>9}" for k in runs)
        )
        for label, _module, _path in STAGES:
            cells = [summary[k]["stages"][label] for k in runs]
            say(
                f"  {label:<30}" + "".join(f" {c['wall_s']:10.3f} {c['cpu_s']:9.3f}" for c in cells)
            )
        for key in ("wall_s", "cpu_s", "cpu_besides_split_and_stub_s"):
            say(f"  {key:<30}" + "".join(f" {summary[k][key]:20.2f}" for k in runs))
        if "top" in runs["ours"][-1]:
            say("  top of the run's thread (cumulative s, own s, calls), last run:")
            for name, ct, tt, nc in runs["ours"][-1]["top"]:
                say(f"    {ct:7.3f} {tt:7.3f} {nc:7d}  {name}")
        return summary
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians of one checkout's runs: totals and, per stage, wall, CPU and calls."""
    stages = {
        label: {
            "wall_s": round(median([x["stages"][label][0] for x in runs]), 3),
            "cpu_s": round(median([x["stages"][label][1] for x in runs]), 3),
            "calls": runs[-1]["stages"][label][2],
        }
        for label, _module, _path in STAGES
    }
    cpu = median([x["cpu_s"] for x in runs])
    besides = cpu - stages["encode (the stub)"]["cpu_s"] - stages["split"]["cpu_s"]
    return {
        "wall_s": round(median([x["wall_s"] for x in runs]), 2),
        "cpu_s": round(cpu, 2),
        "thread_cpu_s": round(median([x["thread_cpu_s"] for x in runs]), 2),
        "cpu_besides_split_and_stub_s": round(besides, 2),
        "added": runs[-1]["added"],
        "stages": stages,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--sets", type=lambda s: s.split(","), default=list(RUSSIAN))
    parser.add_argument("--files", type=int, default=None, help="first N files of each set")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--base",
        type=Path,
        default=None,
        help="another checkout (e.g. git worktree of main), run alternately",
    )
    parser.add_argument("--parallel", action="store_true", help="split on the prefetch thread")
    parser.add_argument("--profile", action="store_true", help="cProfile the run's thread")
    parser.add_argument("--top", type=int, default=30, help="functions listed from the profile")
    parser.add_argument("--pstats", type=Path, default=None, help="dump the last profile here")
    parser.add_argument("--keep", type=Path, default=None, help="copy the last store here")
    parser.add_argument("--out", type=Path, default=None, help="write the summary (JSON)")
    args = parser.parse_args()
    summary = run(args)
    print(json.dumps(summary, ensure_ascii=False))
    if args.out:
        args.out.write_text(json.dumps(summary, ensure_ascii=False, indent=1) + "\n")


if __name__ == "__main__":
    main()
