"""``python -m bench [--quick] [--only split,pipeline,access,memory,backend,cold] [--repeat N]``.

Runs the measurements of issue 6, prints a table and writes ``bench/results.json``. Every goal
is a ratio against a baseline measured in the same run (the machines are shared and noisy), the
median of ``--repeat`` runs (default 3).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from bench.common import machine

STEPS = ("split", "pipeline", "access", "memory", "backend", "linear", "cold")
RESULTS = Path(__file__).resolve().parent / "results.json"


def _inside(overhead: dict[str, Any]) -> float:
    if "ratio_inside" in overhead:
        return overhead["ratio_inside"]
    pairs = zip(overhead["ingest_seconds"], overhead["encode_inside_ingest_seconds"], strict=True)
    return sorted(i / e for i, e in pairs)[len(overhead["ingest_seconds"]) // 2]


def _rows(results: dict[str, Any]) -> list[tuple[str, str, str, bool | None]]:
    """(measurement, value, goal, met) for the table."""
    rows: list[tuple[str, str, str, bool | None]] = []
    for name, row in results.get("split", {}).get("sets", {}).items():
        value = row["speedup"]
        detail = (
            f"{value:.2f}× ({row['mb_per_s']['heading_first']:.2f} vs "
            f"{row['mb_per_s']['recursive']:.2f} MB/s)"
        )
        rows.append((f"split speed vs recursive, {name}", detail, "≥ 2×", value >= 2))
    if "pipeline" in results:
        o, r = results["pipeline"]["overhead"], results["pipeline"]["reindex"]
        rows.append(
            (
                f"ingest ÷ encode ({o['chunks']} chunks)",
                f"{o['ratio']:.3f} (÷ encode inside ingest: {_inside(o):.3f})",
                "≤ 1.15",
                o["ratio"] <= 1.15,
            )
        )
        rows.append(
            (
                "re-index unchanged ÷ first",
                f"{100 * r['unchanged_ratio']:.2f} %",
                "≤ 3 %",
                r["unchanged_ratio"] <= 0.03,
            )
        )
        rows.append(
            (
                "re-index 1 % files changed ÷ first",
                f"{100 * r['changed_ratio']:.2f} %",
                "≤ 5 %",
                r["changed_ratio"] <= 0.05,
            )
        )
    if "access" in results:
        a = results["access"]
        rows.append(
            (
                f"ingest under an access policy ÷ without ({a['rules']} rules)",
                f"{100 * (a['ratio'] - 1):+.2f} %",
                "≤ +2 %",
                a["ratio"] <= 1.02,
            )
        )
    for key in ("memory", "memory_torch"):
        if key in results:
            m = results[key]
            rows.append(
                (
                    f"peak RSS, {m['corpus_mb']} MB corpus, {m['backend']}",
                    f"{m['peak_rss_mb']:.0f} MB",
                    "≤ 1536 MB",
                    m["peak_rss_mb"] <= 1536,
                )
            )
    if "linear" in results:
        from bench import linear

        rows.extend(linear.rows(results["linear"]))
    if "backend" in results:
        b = results["backend"]
        rows.append(("onnx int8 speed ÷ torch", f"{b['speedup']:.2f}×", "info", None))
        rows.append(
            (
                "onnx int8 recall change",
                f"{b['recall_delta']:+.2f} pts (recall@5 {b['recall_at_5_delta']:+.2f})",
                "≥ -1 pt to adopt",
                b["adopt_as_default"],
            )
        )
    if "cold" in results:
        from bench.cold_start import table_rows

        rows.extend(table_rows(results["cold"]))
    return rows


def table(results: dict[str, Any], markdown: bool = False) -> str:
    rows = _rows(results)
    mark = {True: "yes", False: "NO", None: "-"}
    header = ("measurement", "value", "goal", "met")
    body = [(a, b, c, mark[d]) for a, b, c, d in rows]
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|---|---|---|---|"]
        return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in body])
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(4)]
    fmt = "  ".join(f"{{:{w}}}" for w in widths)
    return "\n".join(fmt.format(*r) for r in [header, *body])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller corpora, minutes not tens")
    parser.add_argument("--only", default=",".join(STEPS), help=f"comma list of {STEPS}")
    parser.add_argument("--repeat", type=int, default=3, help="runs per timing (median)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="results JSON")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument(
        "--update", action="store_true", help="keep the other steps' results from --out"
    )
    args = parser.parse_args(argv)
    steps = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = set(steps) - set(STEPS)
    if unknown:
        parser.error(f"unknown steps {sorted(unknown)}; choose from {STEPS}")

    def say(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    results: dict[str, Any] = {"machine": machine(), "quick": args.quick, "repeat": args.repeat}
    if args.update and args.out.exists():
        previous = json.loads(args.out.read_text("utf-8"))
        results = {**previous, **{k: v for k, v in results.items() if k != "machine"}}
        results.setdefault("machine", machine())
        results["machine"].setdefault("runs", []).append({"steps": steps, **machine()})

    def save() -> None:  # after every step: a long run that dies keeps what it measured
        results["machine"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
        args.out.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", "utf-8")

    if "split" in steps:
        from bench import splitting

        results["split"] = splitting.run(args.quick, args.repeat, say)
        save()
    if "pipeline" in steps:
        from bench import pipeline

        results["pipeline"] = pipeline.run(args.quick, args.repeat, say)
        save()
    if "access" in steps:
        from bench import access_ingest

        results["access"] = access_ingest.run(args.quick, args.repeat, say)
        save()
    if "memory" in steps:
        from bench import memory

        results["memory"] = memory.run(args.quick, say)  # the default backend (onnx)
        save()
        results["memory_torch"] = memory.run(args.quick, say, backend="torch")
        save()
    if "linear" in steps:
        from bench import linear

        results["linear"] = linear.run(args.quick, args.repeat, say)
        save()
    if "backend" in steps:
        from bench import backend

        results["backend"] = backend.run(args.quick, say)
    if "cold" in steps:
        from bench import cold_start

        results["cold"] = cold_start.run(args.quick, max(args.repeat, 5), say)
    save()
    print(table(results, markdown=args.markdown))
    print(f"\nresults: {args.out}")
    return 0
