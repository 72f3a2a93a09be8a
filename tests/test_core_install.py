"""The lean install: the core (``pip install ragingest``) pulls no torch, CUDA wheel,
unstructured, pandoc nor matplotlib, no extra but ``[torch]`` pulls torch, and the core alone
runs ``--help``, ``ingest`` (a format whose extra is missing fails by name, the others go in),
``status`` and ``query``."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest
from packaging.utils import canonicalize_name

from tests.conftest import ROOT
from tests.extras import NOT_CORE, missing_env

spec = importlib.util.spec_from_file_location("check_core", ROOT / "scripts" / "check_core.py")
assert spec is not None and spec.loader is not None
check_core = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_core)
spec = importlib.util.spec_from_file_location("runtime_lock", ROOT / "scripts" / "runtime_lock.py")
assert spec is not None and spec.loader is not None
runtime_lock = importlib.util.module_from_spec(spec)
spec.loader.exec_module(runtime_lock)

EXTRAS = ("pdf", "office", "html", "mail", "ocr", "postgres", "ray", "eval", "community")


def test_the_core_closure_holds_none_of_the_heavy_packages():
    # offline: the dependency graph of the installed packages (the lock's versions)
    core = runtime_lock.closure(runtime_lock.project_dependencies())
    assert check_core.problems(sorted(core), core=True) == []
    assert canonicalize_name("chromadb") in core and canonicalize_name("onnxruntime") in core


@pytest.mark.parametrize("extra", EXTRAS)
def test_no_extra_but_torch_pulls_torch_or_a_cuda_wheel(extra):
    names = runtime_lock.closure(runtime_lock.project_dependencies((extra,)))
    assert "torch" not in names
    assert check_core.problems(sorted(names), core=False) == []


def test_the_torch_extra_is_where_torch_is():
    assert "torch" in runtime_lock.closure(runtime_lock.project_dependencies(("torch",)))


@pytest.mark.slow
def test_the_core_resolved_in_an_empty_venv_is_clean():
    try:
        names = check_core.resolve()
    except RuntimeError as exc:  # no package index answers (an offline machine)
        pytest.skip(str(exc))
    assert check_core.problems(names, core=True) == []
    assert "ragingest" in names and "chromadb" in names


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "ragingest.cli.main", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_help_ingest_status_and_query_run_on_the_core(tmp_path):
    env = missing_env(tmp_path / "site", NOT_CORE)
    corpus = tmp_path / "docs"
    corpus.mkdir()
    (corpus / "memo.md").write_text(
        "# Памятка\n\n## Выдача\n\nАльбомы с красной наклейкой выдают на три дня.\n",
        encoding="utf-8",
    )
    (corpus / "report.pdf").write_bytes(b"%PDF-1.4 not read: the extra is checked first")
    (corpus / "page.html").write_text("<h1>Страница</h1><p>Текст страницы.</p>")
    assert _cli(env, "--help").returncode == 0
    store = ["--persist-dir", str(tmp_path / "db"), "--collection", "kb"]
    done = _cli(env, "ingest", str(corpus), *store, "--no-progress")
    assert done.returncode == 1, done.stderr  # some files failed, the others are stored
    output = done.stdout + done.stderr
    assert f"{corpus / 'report.pdf'}: reading .pdf files needs the [pdf] extra: " in output
    assert "pip install 'ragingest[pdf]' (pypdf is not installed)" in output
    assert "pip install 'ragingest[html]' (unstructured is not installed)" in output
    status = _cli(env, "status", *store)
    assert status.returncode == 0, status.stderr
    assert "files: 1 with chunks" in status.stdout
    query = _cli(env, "query", "На сколько дней выдают альбом?", *store, "-k", "1")
    assert query.returncode == 0, query.stderr
    assert "memo.md" in query.stdout and "три дня" in query.stdout
