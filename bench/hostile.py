"""Hostile input under the per-file time bound (``ragingest.loaders.process.bounded``): the slow
cases the tests only check in small (a test runs a tiny timeout).

- **Big HTML**: a generated page of ``--html-mb`` MB (default 30, just under the 32 MB size
  limit) parsed in the worker with the default ``--file-timeout``: whether it finished, and
  how long after the limit the file was given up (the kill latency).
- **Worker overhead**: ``files`` small Markdown files loaded in process vs through the worker
  (one round trip each); the ratio is the per-file cost of the bound. Median of 3.
- **Hostile data** (``--cases data``), each in a fresh process (its peak RSS): a CSV of
  ``--csv-columns`` columns × 1 row ingested whole beside a good file (time, chunks, the most
  metadata keys a stored chunk has; then ``status`` and ``query`` on the collection), and a
  file of one ``#`` heading line of each ``--heading-kb`` size split (time, chunks, peak
  memory: linear in the size with the breadcrumb bound, quadratic without).

    .venv/bin/python -m bench.hostile [--html-mb 30] [--timeout 120] [--files 200]
        [--cases html,overhead,data] [--csv-columns 20000] [--heading-kb 10,100,1000]
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

from bench.common import median, timed
from ragingest.defaults import FILE_TIMEOUT
from ragingest.errors import FileTimeoutError
from ragingest.loaders.process.bounded import ParserPool, load_documents


def big_html(path: Path, megabytes: float) -> Path:
    row = "<tr><td>Позиция {i}</td><td>Описание товара номер {i} для каталога</td></tr>\n"
    with path.open("w", encoding="utf-8") as handle:
        handle.write("<html><head><title>Большая страница</title></head><body><table>\n")
        written, i = 0, 0
        while written < megabytes * 2**20:
            line = row.format(i=i)
            handle.write(line)
            written += len(line.encode())
            i += 1
        handle.write("</table></body></html>\n")
    return path


def bench_big_html(folder: Path, megabytes: float, timeout: float) -> dict:
    page = big_html(folder / "big.html", megabytes)
    with ParserPool(timeout=timeout) as pool:
        pool.call("warm-up", int)  # the worker's start-up is not the file's time
        started = time.perf_counter()
        try:
            documents = pool.load(page, folder, 32 * 2**20)
            outcome = f"parsed: {sum(len(d.page_content) for d in documents)} characters"
        except FileTimeoutError as exc:
            outcome = f"stopped: {exc.reason}"
        seconds = time.perf_counter() - started
    return {
        "html_mb": round(page.stat().st_size / 2**20, 1),
        "timeout_s": timeout,
        "outcome": outcome,
        "seconds": round(seconds, 2),
        "over_the_limit_s": round(max(0.0, seconds - timeout), 2),
    }


def bench_overhead(folder: Path, files: int, repeat: int = 3) -> dict:
    paths = []
    for i in range(files):
        path = folder / f"doc{i:03d}.md"
        path.write_text(f"# Раздел {i}\n\nАбзац {i} о выдаче книг.\n", "utf-8")
        paths.append(path)
    here, worker = [], []
    with ParserPool() as pool:
        pool.call("warm-up", int)
        for _ in range(repeat):
            here.append(timed(lambda: [load_documents(p, folder, 2**20) for p in paths])[0])
            worker.append(timed(lambda: [pool.load(p, folder, 2**20) for p in paths])[0])
    return {
        "files": files,
        "in_process_ms_per_file": round(1000 * median(here) / files, 3),
        "worker_ms_per_file": round(1000 * median(worker) / files, 3),
        "ratio": round(median(worker) / median(here), 2),
    }


WIDE_CSV = """
import json, resource, sys, time
from pathlib import Path
from ragingest.cli.main import main
from ragingest.schema import SCHEMA
from ragingest.vectorstore.chroma.store import chroma_client
docs, db = Path(sys.argv[1]), sys.argv[2]
store = ["--persist-dir", db, "--collection", "wide"]
started = time.perf_counter()
code = main(["ingest", str(docs), *store, "--no-progress", "--report", db + ".json"])
seconds = time.perf_counter() - started
stored = chroma_client(db).get_collection("wide").get(include=["metadatas"])
keys = max(len(set(m) - set(SCHEMA)) for m in stored["metadatas"])
after = [main(["status", *store]), main(["query", "c19999", *store, "-k", "1"])]
notes = [n for f in json.load(open(db + ".json"))["files"] for n in f["notes"]]
print(json.dumps({"exit": code, "seconds": round(seconds, 1), "chunks": len(stored["ids"]),
    "most_extra_keys": keys, "status_query_exit": after, "notes": notes,
    "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}))
"""

LONG_HEADING = """
import json, resource, sys, time
from pathlib import Path
from tests.splitting import split_file
from ragingest.splitters.factory import SplitSettings, base_splitter
path = Path(sys.argv[1])
settings = SplitSettings()
splitter = base_splitter(settings, model="intfloat/multilingual-e5-small")
started = time.perf_counter()
chunks = split_file(path, path.parent, splitter, settings=settings)
print(json.dumps({"kb": path.stat().st_size // 1024, "chunks": len(chunks),
    "seconds": round(time.perf_counter() - started, 2),
    "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}))
"""


def _child(script: str, *args: str, timeout: float = 1800) -> dict:
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        env=env, capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def bench_wide_csv(folder: Path, columns: int) -> dict:
    docs = folder / "wide"
    docs.mkdir()
    header = ",".join(f"c{i}" for i in range(columns))
    (docs / "wide.csv").write_text(header + "\n" + ",".join(map(str, range(columns))) + "\n")
    (docs / "memo.md").write_text("# Памятка\n\nЗаявление подают за две недели.\n", "utf-8")
    return {"columns": columns, **_child(WIDE_CSV, str(docs), str(folder / "wide-db"))}


def bench_long_heading(folder: Path, kilobytes: int) -> dict:
    words = " ".join(f"заголовок{i}" for i in range(kilobytes * 100))
    path = folder / f"heading{kilobytes}.md"
    path.write_text("# " + words[: kilobytes * 1024] + "\n\nТекст.\n", "utf-8")
    return _child(LONG_HEADING, str(path))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html-mb", type=float, default=30)
    parser.add_argument("--timeout", type=float, default=FILE_TIMEOUT)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--cases", default="html,overhead,data")
    parser.add_argument("--csv-columns", type=int, default=20_000)
    parser.add_argument("--heading-kb", default="10,100,1000")
    args = parser.parse_args()
    cases = set(args.cases.split(","))
    results: dict = {}
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        if "overhead" in cases:
            results["overhead"] = bench_overhead(folder, args.files)
        if "html" in cases:
            results["big_html"] = bench_big_html(folder, args.html_mb, args.timeout)
        if "data" in cases:
            results["wide_csv"] = bench_wide_csv(folder, args.csv_columns)
            results["long_heading"] = [
                bench_long_heading(folder, int(kb)) for kb in args.heading_kb.split(",")
            ]
    print(json.dumps(results, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
