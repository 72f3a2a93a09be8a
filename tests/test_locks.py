"""The two locks agree: ``requirements-runtime.lock`` (scripts/demo.sh) is the part of
``requirements.lock`` (scripts/test.sh) that pyproject.toml's own dependencies need, pin for
pin, as ``scripts/runtime_lock.py`` writes it from the installed packages' metadata."""

from __future__ import annotations

import importlib.util
import re

import pytest
from packaging.utils import canonicalize_name

from tests.conftest import ROOT

spec = importlib.util.spec_from_file_location("runtime_lock", ROOT / "scripts" / "runtime_lock.py")
assert spec is not None and spec.loader is not None
runtime_lock = importlib.util.module_from_spec(spec)
spec.loader.exec_module(runtime_lock)

FULL = runtime_lock.read_pins(runtime_lock.FULL_LOCK)
RUNTIME = runtime_lock.read_pins(runtime_lock.RUNTIME_LOCK)
EXACT = re.compile(r"^[A-Za-z0-9._-]+==[0-9][0-9A-Za-z.+!-]*$")


def test_every_pin_is_exact():
    bad = [line for line in [*FULL.values(), *RUNTIME.values()] if not EXACT.match(line)]
    assert bad == []


def test_the_runtime_lock_is_part_of_the_full_lock_with_the_same_pins():
    assert set(RUNTIME) < set(FULL)
    assert {name: FULL[name] for name in RUNTIME} == RUNTIME


def test_the_runtime_lock_leaves_out_the_dev_tools_and_the_extras():
    for name in ("pytest", "ruff", "mypy", "ray", "chonkie", "semchunk", "llama-index-core",
                 "transformers", "sentence-transformers", "matplotlib", "psycopg"):
        assert name in FULL
        assert name not in RUNTIME


def test_the_runtime_lock_is_what_the_script_writes_from_pyproject():
    expected = runtime_lock.runtime_lock_text()
    assert runtime_lock.RUNTIME_LOCK.read_text(encoding="utf-8") == expected, (
        "requirements-runtime.lock is stale: run .venv/bin/python scripts/runtime_lock.py"
    )


@pytest.mark.parametrize("extras", [False, True], ids=["runtime", "with-extras"])
def test_each_lock_pins_every_package_its_install_needs(extras):
    lock = FULL if extras else RUNTIME
    groups = True if extras else runtime_lock.DEMO_EXTRAS  # the demo: its sample files' extras
    needed = runtime_lock.closure(runtime_lock.project_dependencies(groups))
    # torch: its CPU wheel is installed before the lock (scripts/setup.sh); setuptools: the venv's
    unpinned = needed - set(lock) - {"torch", "setuptools"}
    assert unpinned == set()
    # the torch backend is an extra: in the full lock, not in the demo's
    assert (canonicalize_name("sentence-transformers") in lock) == extras
