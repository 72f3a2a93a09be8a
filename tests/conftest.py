"""Shared fixtures: the golden memo, the real model info (built once per session)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
GOLDEN = SHARED / "golden"
DATA = Path(__file__).resolve().parent / "data"
EXAMPLES = ROOT / "examples"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.pop("RAGINGEST_RECORDS_URL", None)  # a developer's shared records DB stays untouched
# One intra-op thread per process (torch and ONNX Runtime read it, and the subprocesses the
# tests start inherit it): the test workers, their CLI processes and servers run side by side
# on a few cores, where a pool per process spins on cores the others need (half the CPU time of
# an encode, measured on 2 cores). The jitter pass then runs ONNX Runtime on 2 (``tests.jitter``).
os.environ.setdefault("OMP_NUM_THREADS", "1")

if os.environ.get("RAGINGEST_TEST_JITTER"):  # the model as another CPU computes it (tests/jitter)
    from tests.jitter import install

    install()

from ragingest.vectorstore.backends import BUILT_IN  # noqa: E402 - after the environment above


@pytest.fixture(scope="module")
def pg():
    """A PostgreSQL server of the module's own (``tests.postgres``), skipped without one."""
    from tests.postgres import postgres_server, server_bin

    if server_bin() is None:
        pytest.skip("PostgreSQL server binaries not installed (scripts/setup_test_system.sh)")
    with postgres_server() as server:
        yield server


def memo_path() -> Path:
    """The memo from ../shared/golden, or the copy in tests/data when shared/ is absent."""
    shared = GOLDEN / "library_memo.md"
    return shared if shared.exists() else DATA / "library_memo.md"


@pytest.fixture(scope="session")
def memo() -> str:
    return memo_path().read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def golden() -> dict:
    shared = GOLDEN / "library_memo.expected.json"
    path = shared if shared.exists() else DATA / "library_memo.expected.json"
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def e5_info():
    from ragingest.models.resolve import load_model_info

    return load_model_info("intfloat/multilingual-e5-small")


@pytest.fixture(params=tuple(BUILT_IN))  # ("chroma", "memory")
def store_backend(request: pytest.FixtureRequest) -> str:
    """Each built-in store backend by name (``tests.stored``), for the tests that run the
    pipeline over every one through the public API."""
    return str(request.param)


@pytest.fixture
def count_parses(monkeypatch) -> list[str]:
    """Names of the files the run handed to its engine to parse (both engines: a Ray run
    parses in worker processes, out of a patch's sight, but its tasks come from here)."""
    parsed: list[str] = []
    from ragingest.pipeline import runner

    real = runner.engine_for

    class Counting:
        def __init__(self, engine) -> None:
            self.engine = engine

        def outcomes(self, tasks):
            parsed.extend(Path(task.name).name for task in tasks)
            return self.engine.outcomes(tasks)

        def written(self, seconds: float) -> None:
            self.engine.written(seconds)

    monkeypatch.setattr(runner, "engine_for", lambda *a, **k: Counting(real(*a, **k)))
    return parsed


# Under pytest-xdist (scripts/test.sh runs ``-n 2 --dist loadscope``) each module is one unit
# of work, so its module-scoped ingests and servers are built once, on one worker; the modules
# that start a Ray runtime (a GB or more each) are one unit, so two never run at once; and the
# longest units are handed out first, so no long module is left for the end of the run.
RAY_MODULES = {
    "tests/pipeline/test_scale_out.py",
    "tests/pipeline/test_ray_file_timeout.py",
    "tests/pipeline/test_ingest_api.py",
    "tests/vectorstore/test_shared_stores.py",
}
LONGEST_FIRST = [  # the units of tens of seconds, longest first (scripts/test.sh's durations)
    "ray",
    "tests/e2e/test_readme_examples_run.py",
    "tests/e2e/test_read_during_write.py",
    "tests/e2e/test_serve_remote.py",
    "tests/pipeline/test_bad_input.py",
    "tests/e2e/test_readme_demo.py",
    "tests/pipeline/test_reindex_processes.py",
    "tests/e2e/test_store_faults.py",
    "tests/cli/test_cli_hostile.py",
    "tests/models/test_e5_provision.py",
    "tests/pipeline/test_rebuild_keeps_name.py",
    "tests/pipeline/test_reindex.py",
]


def _work_unit(nodeid: str) -> str:
    module = nodeid.split("::")[0]
    return "ray" if module in RAY_MODULES else module


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return  # a plain run keeps the collection order
    rank = {unit: i for i, unit in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(_work_unit(item.nodeid), len(rank)))  # stable


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist: absent without it
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """``--dist loadscope`` with the units above (xdist's own splits by module or class;
    its ``loadgroup`` marks don't group under this pytest)."""
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ModuleUnits(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _work_unit(nodeid)

    return ModuleUnits(config, log)


@pytest.fixture
def ocr_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An OCR cache of the test's own (``$RAGINGEST_OCR_CACHE``): no page read by another test
    is answered from the cache."""
    cache = tmp_path / "ocr-cache"
    monkeypatch.setenv("RAGINGEST_OCR_CACHE", str(cache))
    return cache
