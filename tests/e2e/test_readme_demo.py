"""README command (1), as a user runs it: set up, ingest examples/, ask the memo question."""

from __future__ import annotations

import subprocess

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.slow


def test_demo_script_answers_with_the_three_days_chunk_first():
    done = subprocess.run(
        ["bash", "scripts/demo.sh"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    first = lines.index(next(line for line in lines if line.startswith("1. score")))
    first_hit = "\n".join(lines[first : first + 4])
    assert "library_memo.md" in first_hit
    assert "три дня" in first_hit
    assert "0 failed" in done.stdout
