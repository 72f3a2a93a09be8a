#!/usr/bin/env bash
# README command (2): set up, lint, run the tests; then the tests of the real model's rankings
# again with its vectors perturbed (RAGINGEST_TEST_JITTER, see tests/jitter.py),
# as another CPU or thread count would give them: they must pass on any machine.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
bash scripts/setup.sh
bash scripts/setup_test_system.sh
.venv/bin/ruff check .
.venv/bin/lint-imports  # the layers contract in pyproject.toml
.venv/bin/mypy  # the types of ragingest/ ([tool.mypy] in pyproject.toml)
# two worker processes (pytest-xdist; RAGINGEST_TEST_WORKERS=N for another count, 0 for none):
# many tests wait on subprocesses and servers, so two overlap well even on 2 cores; each
# module runs whole on one worker, the longest first (tests/conftest.py)
WORKERS=${RAGINGEST_TEST_WORKERS:-2}
.venv/bin/python -m pytest -q --durations=15 -n "$WORKERS" --dist loadscope --no-loadscope-reorder "$@"
# twice, each text's noise one way then the other: a gap one pass widens the other narrows
RAGINGEST_TEST_JITTER=1e-2 .venv/bin/python -m pytest -q -m model "$@"
RAGINGEST_TEST_JITTER=-1e-2 .venv/bin/python -m pytest -q -m model "$@"
