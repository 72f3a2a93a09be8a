"""Hostile front matter: YAML whose Python value has no fixed order (``!!set`` follows the hash
seed, and the chunk ids hash the metadata: an unchanged file must keep its ids on every run),
and front matter nested deeper than PyYAML's recursive parser goes (the document still loads,
its front matter read as plain lines, with a note; on every path)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from langchain_core.documents import Document

from ragingest.loaders import loader_for
from ragingest.loaders.inputs.sources import DocumentSource
from ragingest.loaders.markdown.front_matter import read_front_matter, storable
from ragingest.splitters import HeadingFirstSplitter
from tests.conftest import ROOT

PAGE = (
    "---\ntags: !!set {alpha, beta, gamma, delta, epsilon, zeta, eta, theta}\n"
    "nested: {2024-01-02: day, 1: one, b: !!set {p, q, r, s, t}, "
    "at: 2001-12-14t21:59:43.10-05:00, raw: !!binary aGk=}\n---\n\n"
    "# Guide\n\nSome words about the guide.\n"
)
IDS = """
import json
from langchain_core.documents import Document
from ragingest.splitters import HeadingFirstSplitter
from ragingest.vectorstore.ids import stored_id

page = open("page.md", encoding="utf-8").read()
chunks = HeadingFirstSplitter(200, 0, 0, unit="chars").split_documents(
    [Document(page_content=page, metadata={"source": "page.md"})]
)
print(json.dumps([stored_id(chunk) for chunk in chunks]))
"""


def test_yaml_sets_and_mixed_keys_are_stored_in_one_order():
    fields, _body = read_front_matter(PAGE)
    assert storable(fields["tags"]) == sorted(
        ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
    )
    assert json.loads(str(storable(fields["nested"]))) == {
        "2024-01-02": "day",
        "1": "one",
        "b": ["p", "q", "r", "s", "t"],
        "at": "2001-12-14T21:59:43.100000-05:00",
        "raw": "aGk=",
    }


def test_chunk_ids_do_not_follow_the_hash_seed(tmp_path):
    (tmp_path / "page.md").write_text(PAGE, "utf-8")
    (tmp_path / "ids.py").write_text(IDS, "utf-8")
    runs = []
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "ids.py"], cwd=tmp_path, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        runs.append(json.loads(done.stdout))
    assert runs[0] and runs[0] == runs[1] == runs[2]


DEEP = "---\nk: " + "[" * 5000 + "]" * 5000 + "\ntitle: Deep\n---\n\n# Deep\n\nThe deep page.\n"
FALLBACK = "front matter nested too deep: its 'key: value' lines kept as strings"


def test_deep_front_matter_falls_back_to_its_lines_on_every_path(tmp_path):
    path = tmp_path / "deep.md"
    path.write_text(DEEP, "utf-8")
    (document,) = loader_for(path, tmp_path).lazy_load()
    assert "The deep page." in document.page_content
    assert document.metadata["title"] == "Deep"
    assert FALLBACK in document.metadata["_notes"]

    healthy = Document(page_content="# Fine\n\nA healthy page.\n", metadata={"source": "fine"})
    given = [Document(page_content=DEEP, metadata={"source": "deep"}), healthy]
    tasks = DocumentSource("documents", lambda: given, given=True).tasks()
    assert [task.key for task in tasks] == ["deep", "fine"]

    chunks = HeadingFirstSplitter(200, 0, 0, unit="chars").split_documents(given)
    assert [c.metadata["source"] for c in chunks] == ["deep", "fine"]
    assert chunks[0].page_content == "# Deep\n\nThe deep page."
