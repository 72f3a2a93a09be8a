#!/usr/bin/env bash
# The core (`pip install ragingest`, no extra) at the lower bounds pyproject.toml declares: every
# core dependency installed at its bound (`name>=X` -> `name==X`), whatever they pull at the
# newest version that fits ("lowest-direct"), no extra, no torch; then the tests the core alone
# runs (the LangChain standard suites, the retriever, the splitters, ingest and query, the
# missing-extra errors on a real core install). Run it after a change of a bound in
# pyproject.toml or of code that calls those packages (README: "Versions"). It resolves from
# the package index (PyPI), in its own venv: $RAGINGEST_LOWEST_VENV (default .venv-lowest).
#   bash scripts/test_lowest.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${RAGINGEST_LOWEST_VENV:-.venv-lowest}
PYTHON=${PYTHON:-python3}
[ -x "$VENV/bin/python" ] || env -u SHELLOPTS "$PYTHON" -m venv "$VENV"
VENV=$(cd "$VENV" && pwd)
pip_install() {
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-compile "$@" \
    2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
}
# the core's dependencies at their lower bounds; the test tools at requirements.lock's pins
REQS="$VENV/lowest-requirements.txt"
"$PYTHON" - "$REQS" <<'PY'
import re, sys, tomllib
from pathlib import Path
TOOLS = {"pytest", "pytest-xdist", "hypothesis", "langchain-tests"}
norm = lambda name: re.sub(r"[-_.]+", "-", name).lower()
lows, missing = [], []
for dep in tomllib.loads(Path("pyproject.toml").read_text())["project"]["dependencies"]:
    m = re.match(r"\s*([A-Za-z0-9_.-]+)(\[[^]]*\])?\s*(?:[^;]*,)?\s*>=\s*([0-9][^,;\s]*)", dep)
    if m is None:
        missing.append(dep)
    else:
        lows.append(f"{m[1]}{m[2] or ''}=={m[3]}")
assert not missing, f"no lower bound for {missing}"
pins = [line for line in Path("requirements.lock").read_text().splitlines()
        if line and not line.startswith("#") and norm(line.split("==")[0]) in TOOLS]
assert len(pins) == len(TOOLS), f"requirements.lock pins {pins}, not all of {sorted(TOOLS)}"
Path(sys.argv[1]).write_text("\n".join([*lows, *pins]) + "\n")
print("lower bounds:", " ".join(lows))
PY
pip_install -r "$REQS"
pip_install --no-deps -e .
"$VENV/bin/python" -m pip check
# no extra came in through the core (a module of one would hide a missing-extra error)
"$VENV/bin/python" - <<'PY'
import importlib.util
from tests.extras import NOT_CORE
present = [name for name in NOT_CORE if importlib.util.find_spec(name) is not None]
assert not present, f"the core install holds extras' modules: {present}"
PY
# the default model's files (cached under ~/.cache/ragingest; rebuilt where these versions of
# onnx/onnxruntime make another file)
"$VENV/bin/python" -m ragingest.models.prepare > "$VENV/model-build.log" 2>&1
source scripts/env.sh
export PYTHONPYCACHEPREFIX="$VENV/pycache"
# the tests the core alone runs (no test here loads torch, transformers or an extra's parser)
exec "$VENV/bin/python" -m pytest -q -n "${RAGINGEST_TEST_WORKERS:-2}" -p no:cacheprovider \
  tests/standard tests/e2e/test_langchain_index_interop.py \
  tests/retrieval/test_context.py tests/retrieval/test_filters_fusion.py \
  tests/retrieval/test_settings.py tests/retrieval/test_admission.py tests/retrieval/test_focus.py \
  tests/splitters/test_for_vectorstore.py tests/splitters/test_merged_sections.py \
  tests/vectorstore/test_guarded_langchain.py tests/vectorstore/test_guarded_server.py \
  tests/vectorstore/test_store_contract_access.py tests/vectorstore/test_parent_rows.py \
  tests/vectorstore/test_first_creation_race.py \
  tests/e2e/test_golden_memo.py tests/e2e/test_seed_examples.py \
  tests/cli/test_query_context.py tests/cli/test_help_defaults.py \
  tests/test_core_install.py::test_help_ingest_status_and_query_run_on_the_core \
  tests/pipeline/test_run_plan.py tests/pipeline/test_mass_delete.py \
  tests/pipeline/test_nothing_ingested.py tests/pipeline/test_hostile_values.py \
  tests/pipeline/test_ingest_api.py \
  --deselect tests/pipeline/test_ingest_api.py::test_mypy_types_the_keywords_from_the_dataclasses \
  --deselect tests/pipeline/test_hostile_values.py::test_obsidian_front_matter_with_refused_keys_goes_in \
  "$@"
