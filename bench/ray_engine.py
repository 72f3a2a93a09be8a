"""Ray engine ÷ local engine throughput on this machine (issue 7), and the per-stage costs
``docs/scaling.md`` projects to 1, 4 and 16 nodes.

Both engines ingest the same fresh corpus (``common.write_files_corpus``) into a fresh
embedded Chroma directory (fresh embedding cache: everything is parsed and embedded). The Ray
run starts its own local runtime on 127.0.0.1 (``ragingest.pipeline.ray_env``) inside the timed
ingest. Also measured: plain ``encode`` of the same texts in one process, and where the Ray
run's time went (``ray_engine.RayStats``). The stages stream, so they overlap: wall seconds
are given for the runtime start, the boilerplate scan (a barrier), the time to the first
write and the pipeline (scan end → last row at the driver); busy seconds summed over workers
for splitting, embedding and model loading; the driver's seconds writing and waiting for rows.

    .venv/bin/python -m bench.ray_engine [--files 60] [--kb 300] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import write_files_corpus


def _ingest(corpus: Path, persist: Path, engine: str) -> tuple[float, Any]:
    from ragingest.pipeline.runner import IngestOptions, ingest

    options = IngestOptions(persist_dir=persist, collection="bench", engine=engine)
    started = time.perf_counter()
    report = ingest([corpus], options)
    return time.perf_counter() - started, report


def _plain_encode(persist: Path) -> tuple[float, int]:
    """Seconds of one in-process ``embed_documents`` over the texts the local run stored."""
    import chromadb

    from ragingest.models.embeddings import SentenceTransformerEmbeddings

    client = chromadb.PersistentClient(str(persist))
    got = client.get_collection("bench").get(include=["documents"])
    texts = list(got["documents"])
    model = SentenceTransformerEmbeddings(None, batch_size=64)
    model.embed_documents(texts[:8])  # warm-up
    started = time.perf_counter()
    model.embed_documents(texts)
    return time.perf_counter() - started, len(texts)


def run(files: int, kb: int) -> dict[str, Any]:
    from ragingest.pipeline import engine_ray as ray_engine

    with tempfile.TemporaryDirectory(prefix="ragingest-bench-ray-") as folder:
        base = Path(folder)
        corpus = base / "corpus"
        write_files_corpus(corpus, files, kb * 1024)
        local_s, local = _ingest(corpus, base / "local", "local")
        encode_s, texts = _plain_encode(base / "local")
        ray_s, ray = _ingest(corpus, base / "ray", "ray")
        stages = dict(ray_engine.LAST_STATS.seconds)
    chunks = local.added
    assert ray.added == chunks, (ray.added, chunks)
    stats = ray_engine.LAST_STATS
    to_first_write = stages["start"] + stages["scan"] + stages["first_write"]
    result = {
        "cpus": os.cpu_count(),
        "files": files,
        "chunks": chunks,
        "local_s": round(local_s, 2),
        "ray_s": round(ray_s, 2),
        "plain_encode_s": round(encode_s, 2),
        "local_chunks_per_s": round(chunks / local_s, 2),
        "ray_chunks_per_s": round(chunks / ray_s, 2),
        "ray_over_local": round(local_s / ray_s, 3),
        "ray_over_plain_encode": round(encode_s / ray_s, 3),
        "ray_seconds": {k: round(v, 2) for k, v in stages.items()},
        "ray_to_first_write_s": round(to_first_write, 2),
        "ray_outside_pipeline_s": round(
            ray_s - stages["start"] - stages["scan"] - stages["pipeline"], 2
        ),
        "ray_write_groups": stats.groups,
        "ray_split_workers": stats.split_workers,
        "ray_max_buffered_files": stats.max_buffered_files,
        "ray_texts_embedded": stats.texts_embedded,
        "actors": stats.actors,
        "texts": texts,
    }
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.ray_engine", description=__doc__)
    parser.add_argument("--files", type=int, default=60)
    parser.add_argument("--kb", type=int, default=300, help="corpus size in KiB")
    parser.add_argument("--json", type=Path, help="also write the result here")
    args = parser.parse_args(argv)
    result = run(args.files, args.kb)
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
