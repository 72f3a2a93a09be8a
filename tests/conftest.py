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
