"""The README's access-policy examples run as written: the operator's ``access.toml``, the
ingest under it, and the Python calls that read as a signed-in user (real model, real Chroma,
real parsers). What each reader gets is checked against the config's rules."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, ROOT
from tests.e2e.test_plain_script import run_script
from tests.e2e.test_readme_examples_run import _env, readme_config_files

pytestmark = pytest.mark.slow

CLI = Path(sys.executable).with_name("ragingest")

CHECKS = """
sources = {d.metadata["source"] for d in docs}
assert docs and all(
    set(d.metadata["access"]) & {"*", "group:hr", "user:anna"} for d in docs
), [(d.metadata["source"], d.metadata["access"]) for d in docs]
assert not any(s.startswith("mail_thread") for s in sources), sources
bob = ragingest.retriever("./chroma_db", "kb-acl", k=8, principals=Principals.of(user="bob"))
seen = {d.metadata["source"] for d in bob.invoke("Когда можно вернуть товар? регламент")}
assert seen and not any(s.startswith(("regulation_", "mail_thread")) for s in seen), seen
every = {d.metadata["source"] for d in everything.invoke("регламент возврата", k=8)}
assert any(s.startswith("regulation_") for s in every), every
print("checked", sorted(sources))
"""


def readme_python(marker: str) -> str:
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text("utf-8"), re.S)
    return next(block for block in blocks if marker in block)


def test_the_readme_access_examples_run(tmp_path: Path):
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    (tmp_path / "access.toml").write_text(readme_config_files()["access.toml"], "utf-8")
    ingest = [str(CLI), "ingest", "examples/", "--persist-dir", "./chroma_db"]
    ingest += ["--collection", "kb-acl", "--config", "access.toml", "--no-progress"]
    done = subprocess.run(ingest, cwd=tmp_path, capture_output=True, text=True, env=_env())
    assert done.returncode == 0, done.stdout + done.stderr
    query = [str(CLI), "query", "Когда можно вернуть товар?", "--persist-dir", "./chroma_db"]
    query += ["--collection", "kb-acl"]
    refused = subprocess.run(query, cwd=tmp_path, capture_output=True, text=True, env=_env())
    assert refused.returncode == 2 and "--as" in refused.stderr, refused.stderr

    done = run_script(tmp_path, readme_python("principals=anna") + CHECKS)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "checked" in done.stdout

    done = run_script(tmp_path, readme_python("access_policy=AccessPolicy()"))
    assert done.returncode == 0, done.stdout + done.stderr
