#!/usr/bin/env bash
# Create .venv in the repo root and install ragingest with pinned versions, offline-safe.
#   bash scripts/setup.sh            everything: requirements.lock (runtime, dev tools, the
#                                    ray and bench extras), what scripts/test.sh needs
#   bash scripts/setup.sh --runtime  what ragingest itself runs: requirements-runtime.lock
#                                    (scripts/demo.sh); a later full setup adds the rest
# torch==2.13.0 goes first: it is the CPU wheel on disk; a looser spec pulls a CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  "") LOCK=requirements.lock ;;
  --runtime) LOCK=requirements-runtime.lock ;;
  *) echo "usage: bash scripts/setup.sh [--runtime]" >&2; exit 2 ;;
esac
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
# --no-compile: Python compiles the modules a run imports when it first imports them, not all
# ~24 000 files of the install (half of its CPU time); (this machine's pip config names
# find-links folders that may not exist: drop that noise)
pip_install() {
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-compile "$@" \
    2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
}
pip_install torch==2.13.0
pip_install -r "$LOCK"
pip_install --no-deps -e .
