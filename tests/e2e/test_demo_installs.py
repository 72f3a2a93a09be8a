"""The demo installs what the demo runs: ``scripts/demo.sh`` (with ``scripts/setup.sh --runtime``:
requirements-runtime.lock, not the full lock ``scripts/test.sh`` installs) runs no
``apt-get`` and names no chromium nor postgres; the test command's setup installs those.

The scripts run as written, traced (``SHELLOPTS=xtrace``: the scripts they call too), in a
copy of ``scripts/`` whose ``.venv`` holds stubs (a Python, a ragingest, a ruff that log their
arguments and succeed) and whose PATH holds only the few tools the scripts call plus a logging
``apt-get``/``sudo``: the run costs well under a second and installs nothing."""

from __future__ import annotations

import glob
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT

# what the scripts call besides the stubs
TOOLS = ("bash", "dirname", "ls", "id", "grep", "cat", "setsid", "tail")
TEST_ONLY = re.compile(r"apt-get|chromium|postgres", re.IGNORECASE)
LOCK = "requirements-runtime.lock"  # what the demo installs
STUB = '#!/bin/bash\necho "{name} $*" >> "{log}"\n'


@pytest.fixture
def sandbox(tmp_path: Path) -> tuple[Path, dict[str, str], Path]:
    """(root holding scripts/ and a stub .venv, the environment, the stubs' call log)."""
    root, tools, log = tmp_path / "clone", tmp_path / "bin", tmp_path / "calls.log"
    shutil.copytree(ROOT / "scripts", root / "scripts")
    (root / ".venv" / "bin").mkdir(parents=True)
    tools.mkdir()
    stubs = {root / ".venv" / "bin" / n: n for n in ("python", "ragingest", "ruff", "uv")}
    stubs |= {tools / n: n for n in ("apt-get", "sudo", "python3")}
    for path, name in stubs.items():
        path.write_text(STUB.format(name=name, log=log), encoding="utf-8")
        path.chmod(0o755)
    for name in TOOLS:
        found = shutil.which(name)
        assert found, f"{name} is needed to run the scripts"
        (tools / name).symlink_to(found)
    env = {"PATH": str(tools), "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    return root, env, log


def traced(root: Path, env: dict[str, str], script: str) -> str:
    done = subprocess.run(
        ["bash", f"scripts/{script}"], cwd=root, env={**env, "SHELLOPTS": "xtrace"},
        executable=shutil.which("bash"), capture_output=True,
        text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stderr  # the trace: every command the scripts ran, with its arguments


def test_the_demo_runs_no_test_only_system_package(sandbox):
    root, env, log = sandbox
    trace = traced(root, env, "demo.sh")
    named = [line for line in trace.splitlines() if TEST_ONLY.search(line)]
    assert named == [], "the demo path names a test-only package"
    calls = log.read_text(encoding="utf-8").splitlines()
    assert not [c for c in calls if c.split()[0] in ("apt-get", "sudo")]
    # it still installs ragingest, ingests examples/ and asks the memo's question
    installs = [c for c in calls if c.startswith(("python -m pip install", "uv pip install"))]
    # the runtime pins only: no dev tools, no ray or bench extras (tests/test_locks.py)
    assert [c.split()[-1] for c in installs if " -r " in c] == [LOCK]
    assert [c.split()[1] for c in calls if c.startswith("ragingest ")] == ["ingest", "query"]
    # the model is built while the rest is installed: started (in the background, so only the
    # setup shell's own trace orders it) after what the build imports, before the lock
    # no torch: the core builds the model without it (a full setup installs its CPU wheel)
    assert [c.split()[-1] for c in installs] == ["uv==0.13.9", "filelock", ".", LOCK]
    assert not [c for c in installs if "torch" in c]
    # uv installs the lock's pins (what the build imports, then the lock), pip ragingest itself
    assert [c.split()[0] for c in installs] == ["python", "uv", "python", "uv"]
    assert "-c requirements-runtime.lock" in installs[1]
    assert "python -m ragingest.models.prepare" in calls
    setup = [line for line in trace.splitlines() if re.match(r"\+ (BUILD=|lock_install )", line)]
    assert re.match(r"\+ BUILD=\d+$", setup[-2]) and setup[-1] == f"+ lock_install -r {LOCK}"
    # the build reads ragingest from the checkout: it does not wait for pip to install it
    lines = trace.splitlines()
    editable = lines.index("+ pip_install --no-deps --config-settings editable_mode=compat -e .")
    assert lines.index(setup[-2]) < editable


def test_without_uv_pip_installs_the_same_lock(sandbox):
    root, env, log = sandbox
    (root / ".venv" / "bin" / "uv").unlink()  # pip "installed" it, yet it is not there
    traced(root, env, "demo.sh")
    calls = log.read_text(encoding="utf-8").splitlines()
    installs = [c for c in calls if c.startswith(("python -m pip install", "uv pip install"))]
    assert [c.split()[-1] for c in installs] == ["uv==0.13.9", "filelock", ".", LOCK]
    assert [c.split()[0] for c in installs] == ["python"] * 4
    log.write_text("", encoding="utf-8")
    traced(root, {**env, "RAGINGEST_PIP_ONLY": "1"}, "demo.sh")  # uv not even installed
    calls = log.read_text(encoding="utf-8").splitlines()
    installs = [c for c in calls if c.startswith(("python -m pip install", "uv pip install"))]
    assert [c.split()[-1] for c in installs] == ["filelock", ".", LOCK]


def test_a_failed_model_build_fails_the_setup_with_its_reason(sandbox):
    root, env, log = sandbox
    python = root / ".venv" / "bin" / "python"
    reason = "building the model failed: RuntimeError: sha256 mismatch for e5-small-q4.bin"
    python.write_text(
        STUB.format(name="python", log=log)
        + f'case "$*" in *ragingest.models.prepare*) echo "{reason}" >&2; exit 1;; esac\n',
        encoding="utf-8",
    )
    done = subprocess.run(
        ["bash", "scripts/setup.sh", "--runtime"], cwd=root, env=env,
        executable=shutil.which("bash"), capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 1
    assert "setup: building the default model failed (.venv/model-build.log):" in done.stderr
    assert reason in done.stderr
    # pip still installed the whole lock before the build's failure was reported
    assert "-r requirements-runtime.lock" in log.read_text(encoding="utf-8")


def test_the_full_setup_installs_the_full_lock(sandbox):
    root, env, log = sandbox
    assert "bash scripts/setup.sh\n" in (root / "scripts" / "test.sh").read_text()
    traced(root, env, "setup.sh")
    calls = log.read_text(encoding="utf-8").splitlines()
    installs = [c for c in calls if c.startswith("python -m pip install")]
    assert [c.split()[-1] for c in installs if " -r " in c] == ["requirements.lock"]
    # the [torch] extra's CPU wheel first: the lock's torch range would pull a CUDA build
    assert installs[0].split()[-1] == "torch==2.13.0"


def test_the_test_command_installs_chromium_postgresql_and_tesseract_when_missing(sandbox):
    root, env, log = sandbox
    assert "bash scripts/setup_test_system.sh" in (root / "scripts" / "test.sh").read_text()
    traced(root, env, "setup_test_system.sh")
    calls = log.read_text(encoding="utf-8").splitlines()
    installs = [
        [word for word in c.split(" install ", 1)[1].split() if not word.startswith("-")]
        for c in calls
        if "apt-get" in c and " install " in c
    ]
    # chromium and tesseract are not on the sandbox's PATH; the PostgreSQL check looks at the
    # real /usr/lib
    server_here = bool(glob.glob("/usr/lib/postgresql/*/bin/postgres"))
    assert installs == [
        ["chromium"],
        *([] if server_here else [["postgresql"]]),
        ["tesseract-ocr", "tesseract-ocr-rus", "tesseract-ocr-eng"],
    ]
