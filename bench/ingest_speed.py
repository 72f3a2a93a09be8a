"""Ingest speed against the plain LangChain pipeline, side by side, and ingest ÷ pure encode.

``python -m bench.ingest_speed [--sets a,b] [--files N] [--repeat 2] [--base DIR] [--out FILE]``

The corpus: the tuning sets' ``corpora/`` folders copied into one folder (default: the four
Russian sets, 58 Markdown files, 1.07 MB; ``--files N``: the first N files of each set, for a
quick look). Each repeat runs, in a rotating order, each in a fresh process and a fresh
directory (the ONNX model file is built already; nothing else is cached):

- **ragingest**: ``ingest()`` of the folder with the default options, then, in the same
  process with the model loaded, ``encode`` of the same chunks' embedded texts (``pure
  encode``): ingest ÷ pure encode is measured side by side, in one process;
- **base**: the same child run on another checkout (``--base``, e.g. ``git archive`` of the
  commit before) for before → after;
- **plain**: what a LangChain user writes: ``DirectoryLoader(glob="**/*.md", TextLoader)`` →
  ``RecursiveCharacterTextSplitter(800, 80)`` → ``HuggingFaceEmbeddings`` (e5-small on torch,
  sentence-transformers' default batches of 32) → ``Chroma.from_documents``.

Wall = the child process from its start to the end of its ingest (imports and model load
included), as a user waits for it; the load average is read before and after each child.
Speed ratio = median plain wall ÷ median ragingest wall.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import ROOT, SHARED, median

RUSSIAN = ("docs_ru_grammy", "clickhouse_ru", "docs_ru_deckhouse", "prose_ru_ruslit")

RAGINGEST_CHILD = """
import json, sys, time
from pathlib import Path
from bench.pipeline import _EncodeClock, _embed_texts
from ragingest.models.resolve import load_model_info, load_sentence_transformer
from ragingest.pipeline.runner import IngestOptions, ingest
corpus, persist = Path(sys.argv[1]), Path(sys.argv[2])
model = load_sentence_transformer(None)
with _EncodeClock(model) as clock:
    began = time.perf_counter()
    report = ingest([corpus], IngestOptions(persist, "bench"))
    ingest_s = time.perf_counter() - began
ingested = time.perf_counter()
texts = _embed_texts(corpus, IngestOptions(persist.with_name("unused"), "bench"))
info = load_model_info(None)
began = time.perf_counter()
model.encode(texts, prompt=info.document_prompt or None, batch_size=64,
             normalize_embeddings=True, convert_to_numpy=True)
encode_s = time.perf_counter() - began
after_ingest_s = time.perf_counter() - ingested
print(json.dumps({"ingest_s": ingest_s, "encode_inside_s": clock.seconds, "added": report.added,
                  "computed": report.embeddings_computed, "pure_encode_s": encode_s,
                  "pure_texts": len(texts), "after_ingest_s": after_ingest_s}))
"""

PLAIN_CHILD = """
import json, sys
from pathlib import Path
from langchain_chroma import Chroma
from langchain_community.document_loaders import DirectoryLoader, TextLoader
from langchain_huggingface import HuggingFaceEmbeddings
from langchain_text_splitters import RecursiveCharacterTextSplitter
from ragingest.models.locate import resolve_model_path
corpus, persist = sys.argv[1], sys.argv[2]
docs = DirectoryLoader(corpus, glob="**/*.md", loader_cls=TextLoader,
                       loader_kwargs={"encoding": "utf-8"}).load()
chunks = RecursiveCharacterTextSplitter(chunk_size=800, chunk_overlap=80).split_documents(docs)
embeddings = HuggingFaceEmbeddings(model_name=resolve_model_path(None),
                                   encode_kwargs={"normalize_embeddings": True})
Chroma.from_documents(chunks, embeddings, persist_directory=persist, collection_name="plain")
print(json.dumps({"added": len(chunks), "files": len(docs)}))
"""


def set_folder(name: str) -> Path:
    for base in (ROOT / "bench" / "data", SHARED / "eval"):
        if (base / name / "corpora").is_dir():
            return base / name / "corpora"
    raise SystemExit(f"no set {name!r}")


def write_corpus(dest: Path, sets: list[str], files: int | None) -> tuple[int, int]:
    """The sets' corpora under ``dest/<set>/``; returns (files, bytes)."""
    count = size = 0
    for name in sets:
        paths = sorted(p for p in set_folder(name).rglob("*") if p.is_file())
        for path in paths[:files] if files else paths:
            target = dest / name / path.relative_to(set_folder(name))
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
            count, size = count + 1, size + path.stat().st_size
    return count, size


def child(kind: str, code_root: Path, corpus: Path, persist: Path) -> dict[str, Any]:
    """Run one child; its wall time, the load average around it and what it printed."""
    env = {**os.environ, "PYTHONPATH": str(code_root)}
    script = PLAIN_CHILD if kind == "plain" else RAGINGEST_CHILD
    load = os.getloadavg()[0]
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", script, str(corpus), str(persist)],
        env=env, cwd=code_root, capture_output=True, text=True,
    )  # fmt: skip
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{kind} failed: {done.stderr.strip()[-2000:]}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    # a user's wait: the process until its ingest ended (the pure encode after it is ours)
    out["wall_s"] = wall - out.pop("after_ingest_s", 0.0)
    return {"kind": kind, "load": [round(load, 2),
            round(os.getloadavg()[0], 2)], **{k: round(v, 2) if isinstance(v, float) else v
            for k, v in out.items()}}  # fmt: skip


def run(sets: list[str], files: int | None, repeat: int, base: Path | None, say: Any = print):
    work = Path(tempfile.mkdtemp(prefix="ragingest-speed-"))
    try:
        corpus = work / "corpus"
        count, size = write_corpus(corpus, sets, files)
        say(f"ingest speed: {count} files, {size / 1e6:.2f} MB ({', '.join(sets)})")
        kinds = [("ragingest", ROOT), ("plain", ROOT)] + ([("base", base)] if base else [])
        runs: list[dict[str, Any]] = []
        for r in range(repeat):
            order = kinds[r % len(kinds) :] + kinds[: r % len(kinds)]
            for kind, root in order:
                persist = work / f"{kind}-{r}"
                result = child(kind, root, corpus, persist)
                runs.append(result)
                say(f"  {json.dumps(result)}")
        walls = {k: median([x["wall_s"] for x in runs if x["kind"] == k]) for k, _ in kinds}
        ours = [x for x in runs if x["kind"] == "ragingest"]
        summary = {
            "files": count,
            "bytes": size,
            "sets": sets,
            "median_wall_s": walls,
            "speed_vs_plain": round(walls["plain"] / walls["ragingest"], 2),
            "ingest_over_pure_encode": round(
                median([x["ingest_s"] / x["pure_encode_s"] for x in ours]), 3
            ),
            "ingest_over_encode_inside": round(
                median([x["ingest_s"] / x["encode_inside_s"] for x in ours]), 3
            ),
            "runs": runs,
        }
        if base:
            summary["speed_vs_base"] = round(walls["base"] / walls["ragingest"], 2)
        say(f"  → {json.dumps({k: v for k, v in summary.items() if k != 'runs'})}")
        return summary
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ingest_speed", description=__doc__)
    parser.add_argument("--sets", default=",".join(RUSSIAN), help="tuning sets, comma-separated")
    parser.add_argument("--files", type=int, help="only the first N files of each set")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--base", type=Path, help="another checkout to run as 'base'")
    parser.add_argument("--out", type=Path, help="write the result as JSON here")
    args = parser.parse_args(argv)
    sets = [s for s in args.sets.split(",") if s]
    result = run(sets, args.files, args.repeat, args.base)
    if args.out:
        args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
