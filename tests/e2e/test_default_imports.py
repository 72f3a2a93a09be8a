"""The default path (an ingest of examples/ and a retriever query) imports neither the
sunset langchain-community nor torch: checked in a fresh interpreter's ``sys.modules``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PROGRAM = """
import json, sys
import ragingest
report = ragingest.ingest([sys.argv[1]], persist_dir=sys.argv[2], collection="kb")
found = ragingest.retriever(sys.argv[2], "kb").invoke("return policy")
roots = sorted({name.split(".")[0] for name in sys.modules})
print(json.dumps({"added": report.added, "found": len(found), "roots": roots}))
"""


def test_ingest_and_query_import_no_community_and_no_torch(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, str(EXAMPLES), str(tmp_path / "kb")],
        capture_output=True, text=True, timeout=600, check=True,
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["added"] > 0 and result["found"] > 0
    assert "langchain_community" not in result["roots"]
    assert "torch" not in result["roots"]
