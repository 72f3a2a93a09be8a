#!/usr/bin/env bash
# Create .venv in the repo root and install ragingest with pinned versions, offline-safe.
# torch==2.13.0 goes first: it is the CPU wheel on disk; a looser spec pulls a CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
# (this machine's pip config names find-links folders that may not exist: drop that noise)
pip_install() {
  .venv/bin/python -m pip install --quiet --disable-pip-version-check "$@" \
    2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
}
pip_install torch==2.13.0
pip_install -r requirements.lock
pip_install --no-deps -e .
