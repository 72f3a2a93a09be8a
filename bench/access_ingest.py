"""The ingest cost of an access policy: the same corpus ingested with and without one, in one
process with the model loaded once (goal: the policy adds ≤ 2 %).

Each repeat ingests the corpus twice into fresh Chroma directories, once plain and once under a
policy of 50 ``[[access]]`` rules (each file matched by glob: half of them granted to two of 50
groups, the rest left to the default, deny), the order alternating so a drift of the machine's
load falls on both alike. Both runs compute every embedding (each directory has its own
embedding cache). Reported: the median ratio of the policy run to the plain one, the seconds
the run spent in the policy step itself (``pipeline.access_sync.sync_access``: rules, file
states, in-place writes), and, for information, a re-run after the readers of every file
changed (each file's chunks and parents rewritten in place, nothing embedded) ÷ the first run.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import median, timed, write_files_corpus

COLLECTION = "bench"
GROUPS = 50


def policy(shift: int = 0) -> Any:
    """The bench's policy: rule i grants ``doc_00ii.md`` to groups g(i+shift), g(i+shift+1)."""
    from ragingest.pipeline.access_policy import AccessPolicy, AccessRule

    rules = tuple(
        AccessRule(
            f"doc_00{i:02d}.md",
            groups=(f"g{(i + shift) % GROUPS}", f"g{(i + shift + 1) % GROUPS}"),
        )
        for i in range(GROUPS)
    )
    return AccessPolicy(rules, origin="bench policy")


class _PolicyClock:
    """Adds up the seconds spent in ``sync_access`` (the run's policy step)."""

    def __init__(self) -> None:
        from ragingest.pipeline import runner

        self.runner = runner
        self.inner = runner.sync_access
        self.seconds = 0.0

    def __enter__(self) -> _PolicyClock:
        def sync_access(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return self.inner(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - started

        self.runner.sync_access = sync_access  # type: ignore[assignment]
        return self

    def __exit__(self, *exc: Any) -> None:
        self.runner.sync_access = self.inner  # type: ignore[assignment]


def run(quick: bool, repeat: int, say: Any = print) -> dict[str, Any]:
    from ragingest.pipeline.runner import IngestOptions, ingest

    files, total = (100, 60_000) if quick else (100, 250_000)
    work = Path(tempfile.mkdtemp(prefix="ragingest-bench-access-"))
    try:
        corpus = work / "corpus"
        write_files_corpus(corpus, files, total)
        ingest([corpus], IngestOptions(work / "warm", COLLECTION))  # the model loaded once
        plain_s, policy_s, step_s, chunks = [], [], [], 0
        for r in range(repeat):
            for mode in (("plain", "policy") if r % 2 == 0 else ("policy", "plain")):
                folder = work / f"{mode}{r}"
                access = policy() if mode == "policy" else None
                with _PolicyClock() as clock:
                    t, report = timed(
                        lambda d=folder, a=access: ingest(
                            [corpus], IngestOptions(d, COLLECTION, access_policy=a)
                        )
                    )
                chunks = report.added
                (policy_s if mode == "policy" else plain_s).append(t)
                if mode == "policy":
                    step_s.append(clock.seconds)
                say(f"  run {r + 1} {mode}: {t:.2f} s ({report.added} chunks)")
        ratio = median(policy_s) / median(plain_s)
        first = policy_s[-1]  # the first run of ``policy_dir``
        policy_dir = work / f"policy{repeat - 1}"
        t_change, changed = timed(
            lambda: ingest([corpus], IngestOptions(policy_dir, COLLECTION, access_policy=policy(7)))
        )
        result = {
            "files": files,
            "bytes": total,
            "chunks": chunks,
            "rules": GROUPS,
            "plain_seconds": [round(x, 2) for x in plain_s],
            "policy_seconds": [round(x, 2) for x in policy_s],
            "policy_step_seconds": [round(x, 3) for x in step_s],
            "ratio": round(ratio, 4),
            "readers_changed_files": len(changed.access_changed),
            "readers_changed_embedded": changed.embeddings_computed,
            "readers_changed_seconds": round(t_change, 2),
            "readers_changed_ratio": round(t_change / first, 4),
        }
        say(
            f"access policy: {100 * (ratio - 1):+.2f} % ingest time ({median(policy_s):.2f} vs "
            f"{median(plain_s):.2f} s; the policy step {median(step_s):.3f} s); readers of "
            f"{len(changed.access_changed)} files changed: {t_change:.2f} s, "
            f"{changed.embeddings_computed} embedded"
        )
        return result
    finally:
        shutil.rmtree(work, ignore_errors=True)
