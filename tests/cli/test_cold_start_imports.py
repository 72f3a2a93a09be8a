"""The fast-start paths import no heavy module they do not use (checked in fresh processes:
``sys.modules`` at exit). Speed itself is measured in bench/cold_start.py, not here."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import EXAMPLES, ROOT

pytestmark = pytest.mark.slow

HEAVY = ("torch", "sentence_transformers", "transformers", "sklearn", "scipy")
# a query needs none of these (tomllib: no config file is read where none is there)
READ_ONLY = ("langchain_chroma", "sqlalchemy", "langchain_core.runnables", "tomllib")
PROBE = """
import json, sys
from ragingest.cli.main import main
try:
    code = main({argv!r})
except SystemExit as exc:
    code = exc.code
print(json.dumps({{"code": code, "loaded": sorted(m for m in {modules!r} if m in sys.modules)}}))
"""


def _probe(argv: list[str], modules: tuple[str, ...]) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1", RAGINGEST_BACKEND="onnx")
    script = PROBE.format(argv=argv, modules=modules)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_help_imports_neither_models_nor_chroma():
    result = _probe(["--help"], (*HEAVY, "chromadb", "langchain_chroma", "onnxruntime"))
    assert result == {"code": 0, "loaded": []}


@pytest.fixture(scope="module")
def memo_store(tmp_path_factory):
    persist = tmp_path_factory.mktemp("cold") / "chroma_db"
    argv = ["ingest", str(EXAMPLES / "library_memo.md"), "--persist-dir", str(persist)]
    result = _probe([*argv, "--collection", "examples", "--no-progress"], ())
    assert result["code"] == 0
    return persist


def test_query_on_onnx_imports_no_torch_sentence_transformers_or_transformers(memo_store):
    argv = ["query", "альбом с красной наклейкой", "--persist-dir", str(memo_store)]
    result = _probe([*argv, "--collection", "examples", "-k", "1"], (*HEAVY, *READ_ONLY))
    assert result == {"code": 0, "loaded": []}


def test_inspect_imports_no_torch_sentence_transformers_or_transformers():
    argv = ["inspect", str(EXAMPLES / "library_memo.md")]
    result = _probe(argv, (*HEAVY, "chromadb"))
    assert result == {"code": 0, "loaded": []}
