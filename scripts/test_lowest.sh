#!/usr/bin/env bash
# The LangChain-facing tests at the declared lower bounds of langchain-core,
# langchain-text-splitters, langchain-chroma and chromadb (and numpy), in their own venv
# (.venv-lowest); every other package at requirements.lock's pin. Run it after a change of
# those bounds in pyproject.toml or of code that calls those packages (README: "Versions").
#   bash scripts/test_lowest.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=.venv-lowest
PYTHON=${PYTHON:-python3}
[ -x "$VENV/bin/python" ] || env -u SHELLOPTS "$PYTHON" -m venv "$VENV"
pip_install() {
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-compile "$@" \
    2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
}
# the lower bounds, read from pyproject.toml; the lock without those packages (and without
# the ones that need newer versions of them and that no test here imports)
REQS="$VENV/lowest-requirements.txt"
"$PYTHON" - "$REQS" <<'PY'
import re, sys, tomllib
from pathlib import Path
LOWEST = {"langchain-core", "langchain-text-splitters", "langchain-chroma", "chromadb", "numpy"}
DROP = {"langchain-huggingface"}  # needs langchain-core>=1.6.6; nothing tested here imports it
norm = lambda name: re.sub(r"[-_.]+", "-", name).lower()
deps = tomllib.loads(Path("pyproject.toml").read_text())["project"]["dependencies"]
lows = {}
for dep in deps:
    m = re.match(r"([A-Za-z0-9_.-]+)(\[[^]]*\])?\s*>=\s*([0-9][^,;\s]*)", dep)
    if m and norm(m[1]) in LOWEST:
        lows[norm(m[1])] = f"{m[1]}=={m[3]}"
assert set(lows) == LOWEST, f"no lower bound for {LOWEST - set(lows)}"
lines = [l for l in Path("requirements.lock").read_text().splitlines()
         if l and not l.startswith("#") and norm(l.split("==")[0]) not in LOWEST | DROP]
Path(sys.argv[1]).write_text("\n".join([*lines, *lows.values()]) + "\n")
print("lower bounds:", " ".join(lows.values()))
PY
pip_install torch==2.13.0  # the CPU wheel first (a looser spec pulls a CUDA build)
pip_install -r "$REQS"
pip_install --no-deps -e .
"$VENV/bin/python" -m pip check 2>&1 | grep -v "^No broken" || true
"$VENV/bin/python" -m pip list 2>/dev/null \
  | grep -Ei "^(langchain-core|langchain-text-splitters|langchain-chroma|chromadb|numpy) "
# the default model's files (cached under ~/.cache/ragingest: usually there already)
"$VENV/bin/python" -m ragingest.models.prepare > "$VENV/model-build.log" 2>&1
source scripts/env.sh
export PYTHONPYCACHEPREFIX="$PWD/$VENV/pycache"
exec "$VENV/bin/python" -m pytest -q -n 2 -p no:cacheprovider \
  tests/standard \
  tests/retrieval/test_retriever_contract.py tests/retrieval/test_retriever.py \
  tests/retrieval/test_retriever_call_options.py tests/retrieval/test_context.py \
  tests/splitters/test_langchain_conventions.py tests/splitters/test_length_function_limit.py \
  tests/e2e/test_langchain_index_interop.py tests/e2e/test_any_source_e2e.py \
  tests/loaders/test_community_pages.py tests/loaders/test_source_tasks.py \
  tests/cli/test_loader_specs.py tests/cli/test_loader_extras.py \
  tests/pipeline/test_ingest_api.py tests/vectorstore/test_shared_stores.py "$@"
