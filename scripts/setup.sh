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
# headless Chromium for the tests that open the HTML report and inspector (Debian "chromium")
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo -n"
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
      --no-install-recommends chromium; } >/dev/null 2>&1 \
    || echo "setup: could not install chromium; the browser tests will be skipped" >&2
fi
# a PostgreSQL server for the tests of --records-url (Debian "postgresql": its binaries live in
# /usr/lib/postgresql/N/bin; the tests start a throwaway server on 127.0.0.1 and stop it)
if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 && ! command -v postgres >/dev/null 2>&1 \
    && command -v apt-get >/dev/null 2>&1; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo -n"
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
      --no-install-recommends postgresql; } >/dev/null 2>&1 \
    || echo "setup: could not install postgresql; the PostgreSQL tests will be skipped" >&2
fi
