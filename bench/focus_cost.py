"""What a second stage costs a query: ``ragingest.retriever(max_context_tokens=N)`` without
and with each ``second_stage`` over the collection ``bench.context`` ingested for a set (its
``--work`` folder), one client, the questions in order, each setting's p50/p95 and the load average.

``python -m bench.focus_cost [--sets clickhouse_ru,chroma_general] [--work DIR]
[--budget 1024] [--limit 100] [--stages none,sentences,neighbours,next-section]``

Both retrievers are built and warmed on one question first (the model loaded); the focus
stage's unit vectors are kept across the questions, as in a reader that stays up.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def measure(
    name: str, work: Path, budget: int, limit: int, stages: list[str | None]
) -> dict[str, Any]:
    import ragingest
    from bench.context import CL100K, _questions_file, set_folder
    from ragingest.evaluate.data import load_corpus, load_questions

    folder = set_folder(name)
    corpus = load_corpus(folder / "corpora")
    questions = [q.text for q in load_questions(_questions_file(folder), corpus)][:limit]
    persist = work / f"product_{folder.resolve().name}"
    out: dict[str, Any] = {"questions": len(questions)}
    for stage in stages:
        found = ragingest.retriever(
            persist, "bench-context", k=20, max_context_tokens=budget, tokenizer=CL100K,
            second_stage=stage,
        )  # fmt: skip
        found.invoke(questions[0])
        seconds = []
        for question in questions:
            started = time.perf_counter()
            found.invoke(question)
            seconds.append(time.perf_counter() - started)
        out[stage or "none"] = {
            "p50 s": round(statistics.median(seconds), 3),
            "p95 s": round(percentile(seconds, 0.95), 3),
            "load": round(os.getloadavg()[0], 2),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.focus_cost")
    parser.add_argument("--sets", default="clickhouse_ru,chroma_general")
    parser.add_argument("--work", default="/tmp/ragingest-bench-context")
    parser.add_argument("--budget", type=int, default=1024)
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--stages", default="none,sentences,neighbours,next-section")
    args = parser.parse_args()
    stages = [None if s == "none" else s for s in args.stages.split(",")]
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    for name in args.sets.split(","):
        print(name, json.dumps(measure(name, Path(args.work), args.budget, args.limit, stages)))


if __name__ == "__main__":
    main()
