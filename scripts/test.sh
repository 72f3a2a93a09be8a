#!/usr/bin/env bash
# README command (2): set up, lint, run the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 DO_NOT_TRACK=1 ANONYMIZED_TELEMETRY=False
.venv/bin/ruff check .
.venv/bin/lint-imports  # the layers contract in pyproject.toml
.venv/bin/python -m pytest -q "$@"
