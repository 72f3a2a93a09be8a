"""Splitting is linear in the document size, and fast against the peers a user would pick.

``python -m bench.linear [--quick] [--repeat N] [--only linear,peers]``

*Linear*: ``HeadingFirstSplitter`` at its defaults (200 e5 tokens, capped at the model) on one
generated Markdown document each: a table of 10 k / 20 k / 40 k / 80 k rows, a code fence of
50 k / 100 k lines, and 1 / 10 / 50 MB of plain text (the eval corpora's paragraphs, headings
and tables left out), and 10 k / 20 k / 40 k / 100 k headings, each over a one-line section
(``headings``: 100 k is ~1.9 MB, the size that ran past 300 s). Goal: seconds per MB grow at
most 1.5× from the smallest to the largest document of each family (a quadratic step would
give 8× over the tables).

*Peers*: every splitter in a process of its own on the same texts (the eval corpora
``../shared/eval/*/corpora``, each document three times), the same e5 tokenizer, chunk size
200: ours (``split_chunks``, exact offsets), semchunk (``chunkerify``, with offsets), Chonkie's
``RecursiveChunker`` (Rust core) and LangChain's ``RecursiveCharacterTextSplitter.
from_huggingface_tokenizer``. Each process loads its library and tokenizer and splits a small
warm-up text first; the time is its splitting of the corpora (the whole process less that
start-up); each copy is also timed apart (on the first, every splitter's caches are cold).
Goal: ours at least semchunk's throughput and within 1.5× of Chonkie's.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import ROOT, SHARED, median

PEERS = ("ours", "semchunk", "chonkie", "langchain")
CHUNK_SIZE = 200
COPIES = 3  # the corpora, each document this many times


def table_doc(rows: int) -> str:
    body = "".join(
        f"| {i} | item {i} of the price list | {i * 3 % 997}.50 | ok |\n" for i in range(rows)
    )
    return (
        "# Prices\n\nThe list below.\n\n| id | name | price | state |\n|---|---|---|---|\n" + body
    )


def code_doc(lines: int) -> str:
    body = "".join(
        f"    value_{i} = compute({i}, 'step {i % 97}')  # line {i}\n" for i in range(lines)
    )
    return "# Listing\n\n```python\ndef main():\n" + body + "```\n"


def headings_doc(count: int) -> str:
    """``count`` sections of a heading (levels 1-3 in turn) over one short line each."""
    return "\n".join(f"{'#' * (1 + i % 3)} H{i}\n\nx{i}.\n" for i in range(count))


def plain_doc(megabytes: float, seed: int = 14) -> str:
    """Paragraphs of the eval corpora, shuffled, until ``megabytes`` MB (UTF-8)."""
    paragraphs = [
        p.strip()
        for path in sorted(SHARED.glob("eval/*/corpora/*.md"))
        for p in re.split(r"\n\s*\n", path.read_text(encoding="utf-8"))
        if p.strip() and not p.lstrip().startswith(("#", "|", "```"))
    ]
    rng = random.Random(seed)
    parts: list[str] = []
    size, goal = 0, int(megabytes * 1e6)
    while size < goal:
        paragraph = rng.choice(paragraphs)
        parts.append(paragraph)
        size += len(paragraph.encode()) + 2
    return "\n\n".join(parts) + "\n"


def linear_cases(quick: bool) -> dict[str, list[tuple[str, Any]]]:
    if quick:
        return {
            "table": [
                ("5k rows", lambda: table_doc(5_000)),
                ("20k rows", lambda: table_doc(20_000)),
            ],
            "code": [
                ("20k lines", lambda: code_doc(20_000)),
                ("40k lines", lambda: code_doc(40_000)),
            ],
            "plain": [("1 MB", lambda: plain_doc(1)), ("5 MB", lambda: plain_doc(5))],
            "headings": [
                ("5k headings", lambda: headings_doc(5_000)),
                ("20k headings", lambda: headings_doc(20_000)),
            ],
        }
    return {
        "table": [
            (f"{n // 1000}k rows", lambda n=n: table_doc(n))
            for n in (10_000, 20_000, 40_000, 80_000)
        ],
        "code": [(f"{n // 1000}k lines", lambda n=n: code_doc(n)) for n in (50_000, 100_000)],
        "plain": [(f"{n} MB", lambda n=n: plain_doc(n)) for n in (1, 10, 50)],
        "headings": [
            (f"{n // 1000}k headings", lambda n=n: headings_doc(n))
            for n in (10_000, 20_000, 40_000, 100_000)
        ],
    }


def run(quick: bool, repeat: int, say: Any = print) -> dict[str, Any]:
    """Both measurements, for ``python -m bench --only linear``."""
    return {"linear": run_linear(quick, repeat, say), "peers": run_peers(repeat, PEERS, say)}


def rows(results: dict[str, Any]) -> list[tuple[str, str, str, bool | None]]:
    """(measurement, value, goal, met) rows for ``bench.run``'s table."""
    out: list[tuple[str, str, str, bool | None]] = []
    for family, row in results.get("linear", {}).items():
        first, last = row["rows"][0], row["rows"][-1]
        value = f"{row['growth']:.2f}× ({first['s_per_mb']} → {last['s_per_mb']} s/MB)"
        span = f"{first['case']} → {last['case']}"
        out.append((f"split s/MB growth, {family} {span}", value, "≤ 1.5×", row["met"]))
    peers = results.get("peers", {})
    if "ours_vs_semchunk" in peers:
        value = f"{peers['ours_vs_semchunk']:.2f}×"
        out.append(("split speed ours ÷ semchunk", value, "≥ 1×", peers["ours_vs_semchunk"] >= 1))
    if "ours_vs_chonkie" in peers:
        value = f"{peers['ours_vs_chonkie']:.2f}×"
        met = peers["ours_vs_chonkie"] <= 1.5
        out.append(("split time ours ÷ Chonkie", value, "≤ 1.5×", met))
    return out


def run_linear(
    quick: bool, repeat: int, say: Any = print, families: set[str] | None = None
) -> dict[str, Any]:
    from ragingest.splitters import HeadingFirstSplitter

    splitter = HeadingFirstSplitter()
    splitter.split_chunks(table_doc(50) + code_doc(50))  # warm up
    out: dict[str, Any] = {}
    for family, cases in linear_cases(quick).items():
        if families and family not in families:
            continue
        rows = []
        for name, make in cases:
            text = make()
            megabytes = len(text.encode()) / 1e6
            times = []
            for _ in range(repeat if megabytes < 20 else 1):
                started = time.perf_counter()
                chunks = splitter.split_chunks(text)
                times.append(time.perf_counter() - started)
            assert all(text[c.start_index : c.end_index] == c.text for c in chunks)
            seconds = median(times)
            rows.append(
                {
                    "case": name,
                    "mb": round(megabytes, 2),
                    "chunks": len(chunks),
                    "seconds": round(seconds, 3),
                    "s_per_mb": round(seconds / megabytes, 3),
                }
            )
            say(
                f"linear {family} {name}: {megabytes:.2f} MB, {seconds:.2f} s, {len(chunks)} chunks"
            )
            del text, chunks
        growth = rows[-1]["s_per_mb"] / rows[0]["s_per_mb"]
        out[family] = {"rows": rows, "growth": round(growth, 2), "met": growth <= 1.5}
    return out


# -- peers: one process each -----------------------------------------------------------------
def _peer_texts() -> list[str]:
    paths = sorted(SHARED.glob("eval/*/corpora/*.md"))
    if not paths:
        raise SystemExit(f"no corpora under {SHARED / 'eval'}: the benchmark needs ../shared/eval")
    return [p.read_text(encoding="utf-8") for p in paths] * COPIES


def _peer_splitter(name: str) -> Any:
    """A callable text -> number of chunks, built the way that library's users would."""
    from ragingest.models.resolve import load_model_info

    tokenizer = load_model_info(None).tokenizer
    if name == "ours":
        from ragingest.splitters import HeadingFirstSplitter

        ours = HeadingFirstSplitter(
            chunk_size=CHUNK_SIZE, tokenizer=tokenizer, max_embed_tokens=512
        )
        return lambda text: len(ours.split_chunks(text))
    if name == "semchunk":
        import semchunk

        chunker = semchunk.chunkerify(tokenizer, CHUNK_SIZE)
        return lambda text: len(chunker(text, offsets=True)[0])
    if name == "chonkie":
        from chonkie import RecursiveChunker

        chunker = RecursiveChunker(tokenizer=tokenizer.backend_tokenizer, chunk_size=CHUNK_SIZE)
        return lambda text: len(chunker.chunk(text))
    if name == "langchain":
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        lc = RecursiveCharacterTextSplitter.from_huggingface_tokenizer(
            tokenizer, chunk_size=CHUNK_SIZE, chunk_overlap=0
        )
        return lambda text: len(lc.split_text(text))
    raise SystemExit(f"unknown peer {name!r}; choose from {PEERS}")


def _child(name: str) -> None:
    started = time.perf_counter()
    split = _peer_splitter(name)
    texts = _peer_texts()
    split(texts[0][:5000])  # warm up
    setup = time.perf_counter() - started
    started = time.perf_counter()
    chunks, copies, size = 0, [], len(texts) // COPIES
    for i in range(COPIES):  # timed apart: a peer that caches pays little for the repeats
        copy_started = time.perf_counter()
        chunks += sum(split(text) for text in texts[i * size : (i + 1) * size])
        copies.append(time.perf_counter() - copy_started)
    seconds = time.perf_counter() - started
    chars = sum(map(len, texts))
    megabytes = sum(len(t.encode()) for t in texts) / 1e6
    print(
        json.dumps(
            {
                "peer": name,
                "setup": setup,
                "seconds": seconds,
                "copies": copies,
                "chunks": chunks,
                "chars": chars,
                "mb": megabytes,
            }
        )
    )


def run_peers(repeat: int, peers: tuple[str, ...] = PEERS, say: Any = print) -> dict[str, Any]:
    times: dict[str, list[float]] = {p: [] for p in peers}
    firsts: dict[str, list[float]] = {p: [] for p in peers}  # the first copy, caches cold
    info: dict[str, Any] = {}
    for round_ in range(repeat):
        for peer in peers if round_ % 2 == 0 else peers[::-1]:  # alternated
            if peer == "langchain" and round_ > 0:
                continue  # ~45 s a run and 10× slower than the rest: once is enough
            done = subprocess.run(
                [sys.executable, "-m", "bench.linear", "--child", peer],
                cwd=ROOT,
                capture_output=True,
                text=True,
                check=True,
            )
            row = json.loads(done.stdout.strip().splitlines()[-1])
            times[peer].append(row["seconds"])
            firsts[peer].append(row["copies"][0])
            info[peer] = row
            seconds, chunks, setup = row["seconds"], row["chunks"], row["setup"]
            copies = " + ".join(f"{t:.2f}" for t in row["copies"])
            say(f"peer {peer}: {seconds:.2f} s = {copies} ({chunks} chunks, start-up {setup:.1f})")
    mb = next(iter(info.values()))["mb"]
    result = {
        "mb": round(mb, 2),
        "seconds": {p: [round(t, 3) for t in v] for p, v in times.items()},
        "median_seconds": {p: round(median(v), 3) for p, v in times.items()},
        "mb_per_s": {p: round(mb / median(v), 3) for p, v in times.items()},
        "first_copy_median_seconds": {p: round(median(v), 3) for p, v in firsts.items()},
        "chunks": {p: info[p]["chunks"] for p in info},
    }
    med = result["median_seconds"]
    if "semchunk" in med:
        result["ours_vs_semchunk"] = round(med["semchunk"] / med["ours"], 2)
    if "chonkie" in med:
        result["ours_vs_chonkie"] = round(med["ours"] / med["chonkie"], 2)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.linear",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--quick", action="store_true", help="smaller documents")
    parser.add_argument("--repeat", type=int, default=3, help="runs per timing (median)")
    parser.add_argument("--only", default="linear,peers", help="linear, peers or both")
    parser.add_argument("--peers", default=",".join(PEERS), help=f"comma list of {PEERS}")
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    parser.add_argument(
        "--families", default="", help="comma list of linear families (default: all)"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args.child)
        return 0
    steps = {s.strip() for s in args.only.split(",")}
    results: dict[str, Any] = {}
    if "linear" in steps:
        families = {f.strip() for f in args.families.split(",") if f.strip()} or None
        results["linear"] = run_linear(args.quick, args.repeat, families=families)
    if "peers" in steps:
        peers = tuple(p.strip() for p in args.peers.split(",") if p.strip())
        results["peers"] = run_peers(args.repeat, peers)
    print(json.dumps(results, indent=2))
    if args.out:
        args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
