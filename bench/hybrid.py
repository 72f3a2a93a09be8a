"""Hybrid (BM25 + dense, the retriever's default fusion) against dense alone, the real path.

Each shared eval set is ingested by ``ragingest ingest`` (default model and splitter) into a
Chroma directory, then every question goes through ``ragingest.retriever`` twice: dense and
``hybrid=True``, ``k`` = 5, as plain chunks (``parents=False, dedup=False``: the ranking
itself) and as the retriever's default passages (``+parents``: parent sections, de-duplicated).
A returned chunk is placed in its source file by its text (found at or after its offset, so
the measure does not depend on how offsets treat front matter), then scored with
``ragingest.evaluate.metrics``: R@5 (every reference inside the top 5), MRR, and the mean
characters of the top 5 together. The "codes" rows are the questions that name a code or a
number (a token with a digit).

    .venv/bin/python -m bench.hybrid [--sets clickhouse_ru chroma_general] [--limit N]
        [--persist-dir DIR] [--fusion dbsf|rrf] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.common import SHARED
from ragingest.evaluate import metrics as m
from ragingest.evaluate.runner import load_corpus, load_questions

SETS = {
    "clickhouse_ru": ("corpora", "questions.csv"),
    "chroma_general": ("corpora", "questions_df.csv"),
}
_CODE = re.compile(r"\w*\d\w*")


def ingest(corpus: Path, persist: Path, collection: str) -> None:
    from ragingest.cli.main import main

    argv = ["ingest", str(corpus), "--persist-dir", str(persist), "--collection", collection]
    if main([*argv, "--no-progress"]) != 0:
        raise SystemExit(f"ingest of {corpus} failed")


def located(doc: Any, corpus: dict[str, str]) -> m.Hit:
    """The chunk as a span of its source file (found by its text near its offset)."""
    corpus_id = Path(str(doc.metadata["source"])).stem
    text = corpus.get(corpus_id, "")
    start = int(doc.metadata.get("start_index", 0))
    body = doc.page_content
    found = text.find(body, max(0, start - 5000))
    found = text.find(body) if found < 0 else found
    if found < 0:  # normalized whitespace: keep the offsets as they are
        return m.Hit(corpus_id, start, int(doc.metadata.get("end_index", start)), body, 0)
    return m.Hit(corpus_id, found, found + len(body), body, 0)


def measure(
    name: str, persist: Path, limit: int | None, k: int, fusion: str | None = None
) -> dict[str, Any]:
    import ragingest

    folder, questions_file = SETS[name]
    root = SHARED / "eval" / name
    corpus = load_corpus(root / folder)
    questions = load_questions(root / questions_file, corpus)[:limit]
    collection = f"bench_{name}"
    ingest(root / folder, persist, collection)
    options = {} if fusion is None else {"fusion": fusion}
    rows: dict[str, dict[str, list[float]]] = {}
    modes = {  # name: (hybrid, parents and dedup)
        "dense": (False, False),
        "hybrid": (True, False),
        "dense+parents": (False, True),
        "hybrid+parents": (True, True),
    }
    for mode, (hybrid, whole) in modes.items():
        retriever = ragingest.retriever(
            persist, collection, k=k, parents=whole, dedup=whole, hybrid=hybrid, **options
        )
        for q in questions:
            hits = [located(d, corpus) for d in retriever.invoke(q.text)]
            groups = ["all", "codes"] if _CODE.search(q.text) else ["all"]
            for group in groups:
                scores = rows.setdefault(f"{mode}/{group}", {"r@k": [], "mrr": [], "chars": []})
                scores["r@k"].append(m.recall_at_k(q.references, hits))
                scores["mrr"].append(m.mrr(q.references, hits))
                scores["chars"].append(sum(len(h.text) for h in hits))
    return {
        key: {
            "questions": len(v["mrr"]),
            "r@k": round(100 * sum(v["r@k"]) / len(v["r@k"]), 1),
            "mrr": round(sum(v["mrr"]) / len(v["mrr"]), 3),
            "context_chars": round(sum(v["chars"]) / len(v["chars"])),
        }
        for key, v in sorted(rows.items())
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=list(SETS))
    parser.add_argument("--limit", type=int, default=None, help="first N questions of each set")
    parser.add_argument("-k", type=int, default=5)
    parser.add_argument("--persist-dir", default=None, help="reuse a Chroma directory")
    parser.add_argument("--fusion", choices=("dbsf", "rrf"), help="default: the retriever's")
    parser.add_argument("--json", default=None, help="also write the results here")
    args = parser.parse_args(argv)
    persist = Path(args.persist_dir or tempfile.mkdtemp(prefix="bench_hybrid_"))
    results = {
        name: measure(name, persist, args.limit, args.k, args.fusion) for name in args.sets
    }
    head = f"{'set':16} {'mode/questions':22} {'n':>4} {'R@' + str(args.k):>6} {'MRR':>6}"
    print(f"{head} {'context chars':>13}")
    for name, rows in results.items():
        for key, row in rows.items():
            print(
                f"{name:16} {key:22} {row['questions']:4} {row['r@k']:6.1f} {row['mrr']:6.3f} "
                f"{row['context_chars']:13}"
            )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
