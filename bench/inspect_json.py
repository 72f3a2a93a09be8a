"""``inspect --json`` of one 14 MB file against LangChain, both timed as whole processes.

``python -m bench.inspect_json [--copies 10] [--repeat 1] [--out FILE]``

The file: chroma_general's corpora (``../shared/eval/chroma_general/corpora``) concatenated,
``--copies`` times (×10: 14.5 MB). Ours: ``python -m ragingest.cli.main inspect --json
--max-chunks-per-file 0 FILE`` (what a user runs: the interpreter, the model's tokenizer, the
loader, the split, every chunk's metadata and the JSON). LangChain: a process that loads the same
tokenizer, builds ``RecursiveCharacterTextSplitter.from_huggingface_tokenizer`` with the same
size (``ragingest.defaults.CHUNK_SIZE``, no overlap), splits the file and prints its chunks as
JSON. Both write to /dev/null; the two run one after the other in the same run, each timed by
its wall clock and by its CPU time (user + system, ``wait4``: on a shared machine the wall
clock measures the neighbours too). Goal: ours at least 4× faster in CPU time (the wall ratio
was 2.01× when measured for issue 38, 4.13× a week before).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import ROOT, SHARED, median

CORPORA = SHARED / "eval" / "chroma_general" / "corpora"
GOAL = 4.0


def big_file(folder: Path, copies: int) -> Path:
    text = "".join(p.read_text(encoding="utf-8") for p in sorted(CORPORA.glob("*.md")))
    path = folder / f"corpora_x{copies}.md"
    path.write_text(text * copies, encoding="utf-8")
    return path


def _langchain_child(path: str) -> None:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    from ragingest.defaults import CHUNK_SIZE
    from ragingest.models.resolve import load_model_info

    splitter = RecursiveCharacterTextSplitter.from_huggingface_tokenizer(
        load_model_info(None).tokenizer, chunk_size=CHUNK_SIZE, chunk_overlap=0
    )
    chunks = splitter.split_text(Path(path).read_text(encoding="utf-8"))
    print(json.dumps({"chunks": chunks}, ensure_ascii=False))


def _timed(command: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system) of the whole process ``command``."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise SystemExit(f"{command[:4]}... exited {process.returncode}")
    return time.perf_counter() - started, usage.ru_utime + usage.ru_stime


def run(copies: int = 10, repeat: int = 1, say: Any = print) -> dict[str, Any]:
    """Both processes' wall times (median of ``repeat``) and their ratio."""
    python = sys.executable
    with tempfile.TemporaryDirectory() as folder:
        path = big_file(Path(folder), copies)
        ours_cmd = [python, "-m", "ragingest.cli.main", "inspect", "--json"]
        ours_cmd += ["--max-chunks-per-file", "0", "--file-timeout", "0", str(path)]
        theirs_cmd = [python, "-m", "bench.inspect_json", "--child-langchain", str(path)]
        ours, theirs = [], []
        for _ in range(repeat):
            ours.append(_timed(ours_cmd))
            say(f"ours: {ours[-1][0]:.1f} s wall, {ours[-1][1]:.1f} s CPU")
            theirs.append(_timed(theirs_cmd))
            say(f"langchain: {theirs[-1][0]:.1f} s wall, {theirs[-1][1]:.1f} s CPU")
        megabytes = path.stat().st_size / 1e6
    wall = median([t[0] for t in theirs]) / median([o[0] for o in ours])
    cpu = median([t[1] for t in theirs]) / median([o[1] for o in ours])
    return {
        "mb": round(megabytes, 2),
        "ours_wall_s": round(median([o[0] for o in ours]), 1),
        "ours_cpu_s": round(median([o[1] for o in ours]), 1),
        "langchain_wall_s": round(median([t[0] for t in theirs]), 1),
        "langchain_cpu_s": round(median([t[1] for t in theirs]), 1),
        "ratio_wall": round(wall, 2),
        "ratio_cpu": round(cpu, 2),
        "met": cpu >= GOAL,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.inspect_json", description=__doc__)
    parser.add_argument("--copies", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--out", type=Path, help="write the result as JSON here")
    parser.add_argument("--child-langchain", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child_langchain:
        _langchain_child(args.child_langchain)
        return 0
    result = run(args.copies, args.repeat)
    print(json.dumps(result, indent=2))
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
