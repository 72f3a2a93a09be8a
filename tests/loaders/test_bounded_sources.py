"""LangChain loaders (``--loader``, ``[[sources]]``, ``ingest(sources=[loader])``) run under the
per-file bounds, like files: in the parser worker process, stopped past ``--file-timeout`` or
``--file-memory-mb``, reported ``timeout``/``memory`` with the source named, the other sources
going on. The YAML alias bomb is the operator's reproduction (an Obsidian note's front matter
that expanded to 2.67 GB in the main process)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from langchain_community.document_loaders import ObsidianLoader
from langchain_core.document_loaders import BaseLoader
from langchain_core.documents import Document

from ragingest.loaders.inputs.source_items import loader_name
from ragingest.loaders.inputs.sources import DocumentSource
from ragingest.loaders.process.process_tree import resident_bytes
from ragingest.pipeline.sources import plan_sources


class SleepyLoader(BaseLoader):
    """A loader that hangs (a network share that never answers)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def lazy_load(self) -> Iterator[Document]:
        time.sleep(self.seconds)
        yield Document(page_content="late", metadata={"source": "late.txt"})


class HungryLoader(BaseLoader):
    """A loader that allocates far more memory than the bound."""

    def __init__(self, megabytes: int) -> None:
        self.megabytes = megabytes

    def lazy_load(self) -> Iterator[Document]:
        hoard = [bytearray(2**20) for _ in range(self.megabytes)]
        yield Document(page_content=f"{len(hoard)} MB", metadata={"source": "hungry.txt"})


class GoodLoader(BaseLoader):
    def lazy_load(self) -> Iterator[Document]:
        yield Document(page_content="# Заметка\n\nТекст.", metadata={"source": "good.txt"})


def source(loader: BaseLoader) -> DocumentSource:
    return DocumentSource(loader_name(loader), loader.lazy_load)


def test_a_loader_past_the_file_timeout_is_stopped_and_the_other_sources_go_on():
    started = time.monotonic()
    plan = plan_sources([source(SleepyLoader(60)), source(GoodLoader())], {}, None, 2, None)
    assert time.monotonic() - started < 40  # not the loader's 60 s
    assert [(f.path, f.kind) for f in plan.failed] == [("SleepyLoader", "timeout")]
    assert "longer than 2 s (--file-timeout)" in plan.failed[0].reason
    assert [item.source for item in plan.items] == ["doc:good.txt"]


def test_a_loader_past_the_memory_bound_is_stopped_here_unharmed():
    before = resident_bytes(os.getpid()) or 0
    plan = plan_sources([source(HungryLoader(1500)), source(GoodLoader())], {}, None, 60, 400)
    assert [(f.path, f.kind) for f in plan.failed] == [("HungryLoader", "memory")]
    assert "--file-memory-mb 400" in plan.failed[0].reason
    assert [item.source for item in plan.items] == ["doc:good.txt"]
    after = resident_bytes(os.getpid()) or 0
    assert after - before < 300 * 2**20  # the allocation happened in the worker, not here


ALIAS_BOMB = """---
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
---
# Note

Body.
"""


def test_an_obsidian_note_with_a_yaml_alias_bomb_is_bounded(tmp_path: Path):
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "bomb.md").write_text(ALIAS_BOMB, "utf-8")
    before = resident_bytes(os.getpid()) or 0
    loader = ObsidianLoader(str(vault))
    plan = plan_sources([source(loader), source(GoodLoader())], {}, None, 10, 500)
    assert [f.kind for f in plan.failed] in (["memory"], ["timeout"])  # whichever first
    assert plan.failed[0].path == loader_name(loader)
    assert [item.source for item in plan.items] == ["doc:good.txt"]
    after = resident_bytes(os.getpid()) or 0
    assert after - before < 300 * 2**20


def test_without_bounds_a_loader_runs_here_as_before():
    plan = plan_sources([source(GoodLoader())], {}, None, None, None)
    assert not plan.failed and [item.source for item in plan.items] == ["doc:good.txt"]


def test_a_loader_that_does_not_pickle_runs_here_unbounded(caplog):
    local = GoodLoader()
    local.unpicklable = threading.Lock()  # type: ignore[attr-defined]  (not even by value)
    plan = plan_sources([source(local)], {}, None, 30, None)
    assert not plan.failed and [item.source for item in plan.items] == ["doc:good.txt"]
    assert "does not pickle" in caplog.text
