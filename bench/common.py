"""What the measurements share: corpora (given and generated), timing, machine facts."""

from __future__ import annotations

import datetime as dt
import os
import platform
import random
import re
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# the shared data beside the checkout (/work/main → /work/shared; a worktree one level deeper)
SHARED = next(
    (p / "shared" for p in (ROOT.parent, ROOT.parent.parent) if (p / "shared" / "eval").is_dir()),
    ROOT.parent / "shared",
)
EVAL = SHARED / "eval" / "chroma_general"
CORPORA = EVAL / "corpora"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("DO_NOT_TRACK", "1")


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = fn()
    return time.perf_counter() - started, result


def corpus_texts(names: tuple[str, ...] | None = None) -> list[tuple[str, str]]:
    """``(stem, text)`` of the eval corpora, read as is (reference offsets point into it)."""
    paths = sorted(CORPORA.glob("*.md"))
    if names:
        paths = [p for p in paths if p.stem in names]
    if not paths:
        raise SystemExit(f"no corpus in {CORPORA}: the benchmarks need ../shared/eval")
    return [(p.stem, p.read_text(encoding="utf-8")) for p in paths]


def _paragraphs() -> list[str]:
    out: list[str] = []
    for _stem, text in corpus_texts():
        out.extend(p.strip() for p in re.split(r"\n\s*\n", text) if p.strip())
    return out


def write_files_corpus(dest: Path, files: int, total_bytes: int, seed: int = 6) -> list[Path]:
    """``files`` Markdown files of about ``total_bytes`` together, cut from the eval corpora
    at paragraph boundaries, with an H1 and an H2 every few paragraphs (a knowledge base of
    many small documents)."""
    dest.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    paragraphs = _paragraphs()
    per_file = total_bytes // files
    cursor = rng.randrange(len(paragraphs))
    paths = []
    for i in range(files):
        parts = [f"# Document {i:04d}\n"]
        size = 0
        while size < per_file:
            if len(parts) % 4 == 1:
                parts.append(f"## Part {len(parts) // 4 + 1}\n")
            paragraph = paragraphs[cursor % len(paragraphs)][: max(200, per_file)]
            cursor += 1
            parts.append(paragraph + "\n")
            size += len(paragraph.encode())
        path = dest / f"doc_{i:04d}.md"
        path.write_text("\n".join(parts), encoding="utf-8")
        paths.append(path)
    return paths


def write_large_corpus(dest: Path, megabytes: float, file_kb: int = 100, seed: int = 6) -> int:
    """About ``megabytes`` MB of distinct Markdown in ``file_kb`` KB files (paragraphs of the
    eval corpora in random order, each tagged with a unique number so no two chunks are equal
    and no cache can skip them). Returns the bytes written."""
    dest.mkdir(parents=True, exist_ok=True)
    marker = dest / f".complete-{megabytes}-{file_kb}-{seed}"
    if marker.exists():
        return int(marker.read_text())
    rng = random.Random(seed)
    paragraphs = _paragraphs()
    target = int(megabytes * 1_000_000)
    written, index, serial = 0, 0, 0
    while written < target:
        parts = [f"# Generated document {index}\n"]
        size = 0
        while size < file_kb * 1000:
            if rng.random() < 0.2:
                parts.append(f"## Section {serial}\n")
            serial += 1
            parts.append(f"[{serial}] {rng.choice(paragraphs)}\n")
            size += len(parts[-1].encode())
        data = "\n".join(parts).encode()
        (dest / f"gen_{index:05d}.md").write_bytes(data)
        written += len(data)
        index += 1
    marker.write_text(str(written))
    return written


def machine() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import torch

    return {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "platform": platform.platform(),
    }
