"""Cold start: wall seconds of fresh ``ragingest`` processes ÷ a bare ``python -c "import
chromadb"`` process on the same machine.

``python -m bench.cold_start [--repeat 5] [--json OUT]`` (or ``python -m bench --only cold``).

Each round runs the baseline and every command once, one after the other (alternated, so a
load spike hits them alike); the goal is the median of ``--repeat`` rounds (default 5) of
each ÷ the baseline's median. The commands, as a user types them:

- ``ragingest --help``;
- ``ragingest query TEXT --persist-dir DIR --collection examples -k 3`` on a directory holding
  ``examples/library_memo.md`` (ingested once before the rounds; the ONNX model is exported
  then if it was not yet, so no round pays for that);
- ``ragingest inspect examples/library_memo.md`` (heading-first, sizes in model tokens).

Goals: query ≤ 2×, inspect ≤ 2.5×, --help ≤ 1.2× the baseline.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.common import ROOT, machine, median

MEMO = ROOT / "examples" / "library_memo.md"
QUESTION = "На сколько дней выдают альбом с красной наклейкой?"
GOALS = {"help": 1.2, "query": 2.0, "inspect": 2.5}


def _ragingest() -> list[str]:
    """The console script beside this interpreter (what a user runs), else the module."""
    script = Path(sys.executable).with_name("ragingest")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "ragingest.cli.main"]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(HF_HUB_OFFLINE="1", DO_NOT_TRACK="1", ANONYMIZED_TELEMETRY="False")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env


def commands(persist_dir: Path) -> dict[str, list[str]]:
    cli = _ragingest()
    store = ["--persist-dir", str(persist_dir), "--collection", "examples"]
    return {
        "baseline": [sys.executable, "-c", "import chromadb"],
        "help": [*cli, "--help"],
        "query": [*cli, "query", QUESTION, *store, "-k", "3"],
        "inspect": [*cli, "inspect", str(MEMO)],
    }


def _wall(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {done.stderr.strip()[-500:]}")
    return seconds


def run(quick: bool, repeat: int, say: Callable[[str], None]) -> dict[str, Any]:
    repeat = max(1, repeat if not quick else min(repeat, 3))
    env = _env()
    with tempfile.TemporaryDirectory(prefix="ragingest-cold-") as tmp:
        persist = Path(tmp) / "chroma_db"
        cli = _ragingest()
        say("cold start: ingesting the memo once (exports the ONNX model if needed)")
        _wall([*cli, "ingest", str(MEMO), "--persist-dir", str(persist), "--collection",
               "examples", "--no-progress"], env)  # fmt: skip
        todo = commands(persist)
        seconds: dict[str, list[float]] = {name: [] for name in todo}
        for round_ in range(repeat):
            for name, command in todo.items():
                seconds[name].append(_wall(command, env))
            say(f"cold start round {round_ + 1}/{repeat}: " + ", ".join(
                f"{n} {s[-1]:.2f} s" for n, s in seconds.items()))  # fmt: skip
    base = median(seconds["baseline"])
    rows = {
        name: {
            "median_s": round(median(values), 3),
            "ratio": round(median(values) / base, 3),
            "goal": GOALS[name],
            "met": median(values) / base <= GOALS[name],
        }
        for name, values in seconds.items()
        if name != "baseline"
    }
    shown = {name: " ".join(command) for name, command in commands(Path("DIR")).items()}
    return {
        "repeat": repeat,
        "baseline_median_s": round(base, 3),
        "seconds": seconds,
        "commands": shown,
        "rows": rows,
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def table_rows(result: dict[str, Any]) -> list[tuple[str, str, str, bool]]:
    """(measurement, value, goal, met) rows for bench/run.py's table."""
    base = result["baseline_median_s"]
    out = []
    for name, label in (("query", "ragingest query"), ("inspect", "ragingest inspect FILE"),
                        ("help", "ragingest --help")):  # fmt: skip
        row = result["rows"][name]
        value = f"{row['ratio']:.2f}× ({row['median_s']:.2f} s vs {base:.2f} s)"
        out.append((f"cold start, {label} ÷ import chromadb", value, f"≤ {row['goal']}×",
                    row["met"]))  # fmt: skip
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.cold_start", description=__doc__)
    parser.add_argument("--repeat", type=int, default=5, help="rounds (median; default 5)")
    parser.add_argument("--json", type=Path, help="write the raw timings here")
    args = parser.parse_args(argv)
    result = run(False, args.repeat, lambda m: print(m, file=sys.stderr, flush=True))
    result["machine"] = machine()
    for measurement, value, goal, met in table_rows(result):
        print(f"{measurement}: {value}  goal {goal}  {'met' if met else 'NOT met'}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", "utf-8")
    return 0 if all(r["met"] for r in result["rows"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
