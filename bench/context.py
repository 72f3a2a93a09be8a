"""Context for the generator at an equal token budget: plain top-k chunks, parent expansion,
auto-merging.

``python -m bench.context [--sets clickhouse_ru,chroma_general] [--budgets 256,512,1024]``

Each set's corpora are ingested with the default settings (real model, real Chroma, a temp
directory), then every question is answered by each strategy, whose passages are kept whole,
best first, within the budget (``ragingest.retrieval.context.fit_budget``, tokens of the
embedding model's tokenizer). Per strategy and budget: the share of references whose text is
in the context whole, the share of questions with all their references in it (for
clickhouse_ru's rule + exception questions: both), mean context tokens, and the duplicate
rate (share of context characters that another passage of it already holds).
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import SHARED

STRATEGIES: dict[str, dict[str, Any]] = {
    "chunks": {"parents": False},
    "parents": {"parents": True},
    "auto-merge 0.5": {"auto_merge": 0.5},
}


def _questions(folder: Path) -> list[dict[str, Any]]:
    import csv

    with (folder / _questions_file(folder)).open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return [
        {
            "question": row["question"],
            "references": [r["content"] for r in json.loads(row["references"])],
            "kind": row.get("kind", ""),
        }
        for row in rows
    ]


def _questions_file(folder: Path) -> str:
    return "questions.csv" if (folder / "questions.csv").exists() else "questions_df.csv"


def _duplicate_chars(docs: list[Any]) -> tuple[int, int]:
    """(characters held by an earlier passage of the same document, all characters)."""
    seen: dict[str, list[tuple[int, int]]] = {}
    repeated = total = 0
    for doc in docs:
        meta = doc.metadata
        key = str(meta.get("doc_id") or meta.get("source"))
        start, end = int(meta["start_index"]), int(meta["end_index"])
        total += end - start
        for a, b in seen.get(key, []):
            repeated += max(0, min(b, end) - max(a, start))
        seen.setdefault(key, []).append((start, end))
    return repeated, total


def measure(name: str, budgets: list[int], work: Path) -> dict[str, Any]:
    import ragingest
    from ragingest.cli.main import main
    from ragingest.evaluate.trace import contains
    from ragingest.retrieval.context import token_counter

    folder = SHARED / "eval" / name
    persist = work / name
    clock = time.perf_counter()
    args = ["ingest", str(folder / "corpora"), "--persist-dir", str(persist)]
    assert main([*args, "--collection", name.replace("_", "-"), "--no-progress"]) == 0
    ingest_seconds = time.perf_counter() - clock
    count = token_counter()
    questions = _questions(folder)
    rows: dict[str, Any] = {}
    for budget in budgets:
        for strategy, options in STRATEGIES.items():
            found = ragingest.retriever(
                persist, name.replace("_", "-"), k=20, max_context_tokens=budget, **options
            )
            refs = refs_in = all_in = pairs = pairs_in = tokens = repeated = chars = 0
            for q in questions:
                docs = found.invoke(q["question"])
                text = "\n\n".join(d.page_content for d in docs)
                hits = [contains(text, ref) for ref in q["references"]]
                refs += len(hits)
                refs_in += sum(hits)
                all_in += all(hits)
                if q["kind"] == "rule_exception":
                    pairs += 1
                    pairs_in += all(hits)
                tokens += sum(count(d.page_content) for d in docs)
                r, c = _duplicate_chars(docs)
                repeated, chars = repeated + r, chars + c
            n = len(questions)
            rows[f"{strategy} @ {budget}"] = {
                "references_in_context": round(100 * refs_in / refs, 1),
                "questions_all_in_context": round(100 * all_in / n, 1),
                "rule_exception_both": round(100 * pairs_in / pairs, 1) if pairs else None,
                "mean_context_tokens": round(tokens / n, 1),
                "duplicate_rate": round(100 * repeated / max(chars, 1), 2),
            }
    return {"questions": len(questions), "ingest_seconds": round(ingest_seconds, 1), "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.context")
    parser.add_argument("--sets", default="clickhouse_ru,chroma_general")
    parser.add_argument("--budgets", default="256,512,1024")
    parser.add_argument("--out", default=None, help="write the JSON here too")
    args = parser.parse_args()
    budgets = [int(b) for b in args.budgets.split(",")]
    work = Path(tempfile.mkdtemp(prefix="ragingest-context-"))
    try:
        results = {name: measure(name, budgets, work) for name in args.sets.split(",")}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for name, result in results.items():
        print(f"\n{name} ({result['questions']} questions)")
        print(f"{'strategy @ budget':<24} refs%  all%  r+e%  tokens  dup%")
        for label, row in result["rows"].items():
            both = "-" if row["rule_exception_both"] is None else f"{row['rule_exception_both']}"
            print(
                f"{label:<24} {row['references_in_context']:>5} "
                f"{row['questions_all_in_context']:>5} {both:>5} "
                f"{row['mean_context_tokens']:>7} {row['duplicate_rate']:>5}"
            )
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
