"""Hostile input under the per-file time bound (``ragingest.loaders.bounded``): the slow cases
the tests only check in small (a test runs a tiny timeout).

- **Big HTML**: a generated page of ``--html-mb`` MB (default 30, just under the 32 MB size
  limit) parsed in the worker with the default ``--file-timeout``: whether it finished, and
  how long after the limit the file was given up (the kill latency).
- **Worker overhead**: ``files`` small Markdown files loaded in process vs through the worker
  (one round trip each); the ratio is the per-file cost of the bound. Median of 3.

    .venv/bin/python -m bench.hostile [--html-mb 30] [--timeout 120] [--files 200]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from bench.common import median, timed
from ragingest.errors import FileTimeoutError
from ragingest.loaders.bounded import DEFAULT_FILE_TIMEOUT, ParserPool, load_documents


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html-mb", type=float, default=30)
    parser.add_argument("--timeout", type=float, default=DEFAULT_FILE_TIMEOUT)
    parser.add_argument("--files", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        results = {
            "overhead": bench_overhead(folder, args.files),
            "big_html": bench_big_html(folder, args.html_mb, args.timeout),
        }
    print(json.dumps(results, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
