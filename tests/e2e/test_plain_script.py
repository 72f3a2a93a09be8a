"""The README's Python example runs as a plain script (no ``if __name__ == "__main__":``):
the parser workers never import the caller's ``__main__``, so the script's top level runs
once, every file goes in, and failures are loud (a warning per failed file, ``strict=True``
and ``report.raise_for_failures()`` raise). Real parsers, real model, real Chroma."""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import ragingest
from ragingest.pipeline.report import FilesFailedError
from tests.conftest import EXAMPLES, ROOT

pytestmark = pytest.mark.slow  # the real model, parser processes, Chroma on disk

README = ROOT / "README.md"


def readme_ingest_snippet() -> str:
    """The README's ``python`` block that calls ``ragingest.ingest``, as written."""
    blocks = re.findall(r"```python\n(.*?)```", README.read_text("utf-8"), re.DOTALL)
    return next(block for block in blocks if "ragingest.ingest(" in block)


def run_script(folder: Path, text: str) -> subprocess.CompletedProcess[str]:
    script = folder / "s.py"
    script.write_text(text, "utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "s.py"], cwd=folder, env=env, capture_output=True, text=True, timeout=900
    )


def test_the_readme_snippet_runs_as_a_plain_script(tmp_path):
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    done = run_script(tmp_path, readme_ingest_snippet())
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "failed to start" not in output and "Traceback" not in output
    files = [p for p in (tmp_path / "examples").rglob("*") if p.is_file() and p.suffix != ".pdf"]
    ingested = re.search(r"files: (\d+) ingested .*?, (\d+) failed, (\d+) partly", output)
    assert ingested, output
    # every example but the excluded PDF, plus the PDF loader's source and the FAQ document
    assert [int(n) for n in ingested.groups()] == [len(files) + 2, 0, 0]


MARKED = """
from pathlib import Path

import ragingest

with open("marker.txt", "a", encoding="utf-8") as marker:
    marker.write("top level ran\\n")
report = ragingest.ingest(["docs"], persist_dir="db", collection="plain-script")
print(report.summary())
"""


def test_a_script_s_top_level_runs_once(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "page.html").write_text("<html><body><h1>Заголовок</h1><p>Текст.</p></body></html>")
    (docs / "note.md").write_text("# Заметка\n\nАбонемент продлевают на год.\n", "utf-8")
    done = run_script(tmp_path, MARKED)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "marker.txt").read_text("utf-8") == "top level ran\n"
    assert "files: 2 ingested" in done.stdout


def test_failures_are_loud(tmp_path, caplog):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.md").write_text("# Заметка\n\nАбонемент продлевают на год.\n", "utf-8")
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4 not really a pdf")
    persist = tmp_path / "db"
    with caplog.at_level(logging.WARNING):
        report = ragingest.ingest([docs], persist_dir=persist, collection="loud", progress=False)
    assert report.failed == 1 and report.exit_code == 1
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("broken.pdf" in message for message in warned)
    with pytest.raises(FilesFailedError, match=r"1 file\(s\) failed .*broken\.pdf") as caught:
        report.raise_for_failures()
    assert [f.path for f in caught.value.files] == ["broken.pdf"]
    with pytest.raises(FilesFailedError, match=r"broken\.pdf"):
        ragingest.ingest([docs], persist_dir=persist, collection="loud", strict=True)
    (docs / "broken.pdf").unlink()
    clean = ragingest.ingest([docs], persist_dir=persist, collection="loud", strict=True)
    clean.raise_for_failures()  # nothing failed: nothing raised


SCRIPT_LOADERS = """
import json
import time

from langchain_core.document_loaders import BaseLoader
from langchain_core.documents import Document

import ragingest

GREETING = "Абонемент продлевают на год."


class Flaky(BaseLoader):
    def lazy_load(self):
        yield Document(page_content="# Заметка\\n\\n" + GREETING, metadata={"source": "flaky"})


class Stuck(BaseLoader):
    def lazy_load(self):
        time.sleep(600)
        yield Document(page_content="never", metadata={"source": "stuck"})


report = ragingest.ingest(
    [Flaky(), Stuck()], persist_dir="db", collection="script-loaders", file_timeout=5
)
print(json.dumps([[f.path, f.status, f.kind] for f in report.files]))
"""


def test_a_loader_class_the_script_defines_runs_in_the_parser_process_under_its_bounds(
    tmp_path,
):
    """The worker never imports the script, so its classes go by value: the loader works,
    and one that hangs is still stopped at ``file_timeout`` (it ran in the worker)."""
    done = run_script(tmp_path, SCRIPT_LOADERS)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "Can't get attribute" not in output and "Traceback" not in output, output
    files = json.loads(done.stdout.strip().splitlines()[-1])
    assert sorted(files) == [["Stuck", "failed", "timeout"], ["doc:flaky", "ok", ""]]



def test_given_documents_alone_start_no_parser_worker(tmp_path, monkeypatch, capfd):
    """Nothing to parse, no parser worker: none is left to complain on stderr (a
    ``BrokenPipeError`` traceback from a worker the run closed before it was ready)."""
    from langchain_core.documents import Document

    from ragingest.loaders.process.bounded import ParserPool

    started: list[ParserPool] = []
    monkeypatch.setattr(ParserPool, "start", lambda pool: started.append(pool))
    faq = [Document(page_content="Абонемент продлевают на год.", metadata={"source": "faq/a"})]
    report = ragingest.ingest(faq, persist_dir=tmp_path / "db", collection="given")
    assert report.exit_code == 0 and started == []
    assert "Traceback" not in capfd.readouterr().err
