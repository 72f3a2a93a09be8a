"""The Ray engine's worker side under the per-file bounds, called directly (no Ray): a split
batch reports a file past --file-timeout with the local engine's error and splits the rest;
a worker's parser pool is kept across batches and forgets bound failures between runs."""

from __future__ import annotations

import os
import pickle

import pytest

from ragingest.defaults import MODEL
from ragingest.errors import FileTimeoutError
from ragingest.pipeline.options import IngestOptions
from ragingest.pipeline.ray_tasks import split_batch, worker_parsers

pytestmark = pytest.mark.slow

REASON = "parsing took longer than 1 s (--file-timeout): stopped"


def big_page(rows: int = 40_000) -> str:
    cells = "".join(f"<tr><td>Позиция {i}</td><td>Описание {i}</td></tr>" for i in range(rows))
    return f"<html><body><table>{cells}</table></body></html>"


def test_a_split_batch_reports_the_timeout_and_splits_the_rest(tmp_path):
    (tmp_path / "big.html").write_text(big_page(), "utf-8")
    (tmp_path / "a.md").write_text("# Правила\n\nАльбомы выдают на три дня.\n", "utf-8")
    names = ["big.html", "a.md"]
    batch = {
        "path": [str(tmp_path / n) for n in names],
        "root": [str(tmp_path)] * 2,
        "source": names,
    }
    options = IngestOptions(tmp_path, "kbase", file_timeout=1.0)
    out = split_batch(batch, options, MODEL, None, [], run="r1")
    assert out["seq"] == [-1, -1, 0]
    (kind, path, reason), cleaning = pickle.loads(out["blob"][0])
    assert (kind, path, reason, cleaning) == (
        FileTimeoutError,
        str(tmp_path / "big.html"),
        REASON,
        None,
    )
    assert pickle.loads(out["blob"][2]).text == "# Правила\n\nАльбомы выдают на три дня."


def test_a_workers_pool_is_kept_and_forgets_between_runs(tmp_path):
    page = tmp_path / "big.html"
    page.write_text(big_page(), "utf-8")
    options = IngestOptions(tmp_path, "kbase", file_timeout=1.0)
    pool = worker_parsers(options, "first")
    assert worker_parsers(options, "first") is pool
    assert worker_parsers(IngestOptions(tmp_path, "kbase", file_timeout=2.0)) is not pool
    pool = worker_parsers(options, "first")
    restarts = pool.restarts
    for run, parsed in (("first", 1), ("first", 0), ("second", 1)):
        with pytest.raises(FileTimeoutError, match=r"longer than 1 s \(--file-timeout\)"):
            worker_parsers(options, run).load(page, tmp_path, 2**25)
        assert pool.restarts - restarts == parsed, run
        restarts = pool.restarts
    assert pool.call("x", os.getpid) != os.getpid()
