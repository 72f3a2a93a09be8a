"""Pipeline overhead and re-indexing, in one process with the model loaded once.

- overhead: wall time of ``ingest()`` into a fresh Chroma directory ÷ ``model.encode`` of the
  same chunks' embedded texts with the same model, prompt and batch size (goal ≤ 1.15); the
  time spent inside ``encode`` during ingest is measured too, so the rest is the pipeline's;
- re-index: an unchanged re-run ÷ the first run (goal ≤ 3 %), and a re-run after 1 % of the
  files changed ÷ the first run (goal ≤ 5 %);
- for information, the wall time of an unchanged re-run through the CLI (a new process:
  imports included).

The corpus: the eval corpora cut into 100 Markdown files (see ``common.write_files_corpus``).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import median, timed, write_files_corpus

COLLECTION = "bench"


class _EncodeClock:
    """Wraps the loaded model's ``encode`` to add up the seconds spent in it."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.inner = model.encode
        self.seconds = 0.0
        self.texts = 0

    def __enter__(self) -> _EncodeClock:
        def encode(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return self.inner(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - started
                self.texts += len(args[0]) if args else 0

        self.model.encode = encode
        return self

    def __exit__(self, *exc: Any) -> None:
        del self.model.encode  # back to the class's method


def _embed_texts(corpus: Path, options: Any) -> list[str]:
    """The embedded texts ``ingest`` produces for ``corpus`` (same splitter, same order)."""
    from ragingest.loaders import walk
    from ragingest.models.embeddings import SentenceTransformerEmbeddings
    from ragingest.splitters.factory import base_splitter
    from tests.splitting import split_file

    info = SentenceTransformerEmbeddings(options.model).info
    splitter = base_splitter(options.split, info=info)
    texts = []
    for found in walk([corpus]):
        for record in split_file(found.path, found.root, splitter, options.max_file_bytes):
            texts.append(record.embed_text)
    return texts


def run(quick: bool, repeat: int, say: Any = print) -> dict[str, Any]:
    from ragingest.models.resolve import load_model_info, load_sentence_transformer
    from ragingest.pipeline.runner import IngestOptions, ingest

    files, total = (100, 60_000) if quick else (100, 250_000)
    work = Path(tempfile.mkdtemp(prefix="ragingest-bench-"))
    try:
        corpus = work / "corpus"
        paths = write_files_corpus(corpus, files, total)
        info = load_model_info(None)
        model = load_sentence_transformer(None)
        batch = IngestOptions(work, COLLECTION).embed_batch_size
        texts = _embed_texts(corpus, IngestOptions(work, COLLECTION))
        encode = lambda: model.encode(  # noqa: E731
            texts,
            prompt=info.document_prompt or None,
            batch_size=batch,
            normalize_embeddings=True,
            convert_to_numpy=True,
        )
        model.encode(texts[:4], batch_size=batch)  # warm up
        say(f"pipeline: {len(paths)} files, {total // 1000} KB, {len(texts)} chunks")

        ingest_s, encode_s, inside_s, ratios = [], [], [], []
        last: Path | None = None
        for r in range(repeat):
            last = work / f"db{r}"
            with _EncodeClock(model) as clock:
                t_ingest, report = timed(
                    lambda last=last: ingest([corpus], IngestOptions(last, COLLECTION))
                )
            t_encode, _ = timed(encode)
            ingest_s.append(t_ingest)
            encode_s.append(t_encode)
            inside_s.append(clock.seconds)
            ratios.append(t_ingest / t_encode)
            say(
                f"  run {r + 1}: ingest {t_ingest:.1f} s (encode inside {clock.seconds:.1f} s, "
                f"{report.added} added), pure encode {t_encode:.1f} s → {ratios[-1]:.3f}"
            )
        overhead = {
            "files": len(paths),
            "bytes": total,
            "chunks": len(texts),
            "batch_size": batch,
            "ingest_seconds": [round(x, 2) for x in ingest_s],
            "encode_seconds": [round(x, 2) for x in encode_s],
            "encode_inside_ingest_seconds": [round(x, 2) for x in inside_s],
            "ratio": round(median(ratios), 3),
            # the same ratio with the encode time measured inside the same ingest run: immune
            # to load changing between the two timings on a shared machine
            "ratio_inside": round(
                median([i / e for i, e in zip(ingest_s, inside_s, strict=True)]), 3
            ),
            "non_encode_share_of_ingest": round(
                median([(i - e) / i for i, e in zip(ingest_s, inside_s, strict=True)]), 3
            ),
        }

        # re-index, on the last run's directory
        assert last is not None
        first = ingest_s[-1]
        unchanged = []
        for _ in range(repeat):
            t, report = timed(lambda: ingest([corpus], IngestOptions(last, COLLECTION)))
            unchanged.append(t)
        changed_count = max(1, len(paths) // 100)
        changed, embedded = [], []
        for r in range(repeat):
            for path in paths[r * changed_count : (r + 1) * changed_count]:
                with path.open("a", encoding="utf-8") as handle:
                    handle.write(f"\nAn added paragraph, revision {r}, for the re-index run.\n")
            t, report = timed(lambda: ingest([corpus], IngestOptions(last, COLLECTION)))
            changed.append(t)
            embedded.append(report.embeddings_computed)
        cli = _cli_rerun(corpus, last)
        reindex = {
            "first_seconds": round(first, 2),
            "unchanged_seconds": [round(x, 3) for x in unchanged],
            "unchanged_ratio": round(median(unchanged) / first, 4),
            "changed_files": changed_count,
            "changed_seconds": [round(x, 3) for x in changed],
            "changed_embedded": embedded,
            "changed_ratio": round(median(changed) / first, 4),
            "cli_unchanged_wall_seconds": cli,
        }
        say(
            f"re-index: unchanged {100 * reindex['unchanged_ratio']:.2f} %, "
            f"1 % changed {100 * reindex['changed_ratio']:.2f} % of the first run "
            f"({first:.1f} s); CLI unchanged re-run {cli} s wall"
        )
        return {"overhead": overhead, "reindex": reindex}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _cli_rerun(corpus: Path, persist: Path) -> float | None:
    """Wall seconds of ``ragingest ingest`` over the unchanged corpus, as a new process."""
    command = [sys.executable, "-m", "ragingest.cli.main", "ingest", str(corpus)]
    command += ["--persist-dir", str(persist), "--collection", COLLECTION, "--no-progress"]
    t, done = timed(lambda: subprocess.run(command, capture_output=True, text=True))
    return round(t, 2) if done.returncode == 0 else None
