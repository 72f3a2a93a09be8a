"""``pipeline.sources.plan_sources``: document sources as plan items (no model, no Chroma)."""

from __future__ import annotations

from langchain_core.document_loaders import BaseLoader
from langchain_core.documents import Document

from ragingest.loaders.inputs.source_items import split_sources
from ragingest.pipeline.plan import is_unchanged
from ragingest.pipeline.sources import plan_sources, stamp_of
from ragingest.pipeline.state import FileState


class Failing(BaseLoader):
    def lazy_load(self):
        raise TimeoutError("no answer in 30 s")


def docs(*pairs):
    return [Document(page_content=text, metadata={"source": key}) for key, text in pairs]


def test_new_sources_are_parsed_with_their_documents():
    _paths, sources = split_sources([docs(("a", "Первый."), ("b", "Второй."))])
    plan = plan_sources(sources, {})
    assert [(i.source, i.status) for i in plan.items] == [("doc:a", "parse"), ("doc:b", "parse")]
    task = plan.items[0].task
    assert task.path is None and task.source == "doc:a"
    assert [d.page_content for d in task.documents] == ["Первый."]
    assert task.stamp.sha256 == sources[0].tasks()[0].content_hash
    assert plan.failed == [] and plan.keep(["doc:a", "x.md"]) == set()


def test_a_recorded_unchanged_source_is_not_parsed():
    _paths, sources = split_sources([docs(("a", "Первый."), ("b", "Второй."))])
    (task_a, _task_b) = sources[0].tasks()
    known = {"doc:a": FileState(stamp_of(task_a), 3)}
    assert is_unchanged(stamp_of(task_a), known["doc:a"])
    plan = plan_sources(sources, known)
    assert [(i.source, i.status) for i in plan.items] == [
        ("doc:a", "unchanged"),
        ("doc:b", "parse"),
    ]
    assert plan.items[0].state.chunks == 3


def test_a_failed_source_keeps_every_document_source():
    _paths, sources = split_sources([Failing(), docs(("a", "Первый."))])
    plan = plan_sources(sources, {})
    assert [(e.path, e.reason) for e in plan.failed] == [
        ("Failing", "the loader failed: TimeoutError: no answer in 30 s")
    ]
    assert [i.source for i in plan.items] == ["doc:a"]
    assert plan.keep(["doc:old", "doc:a", "notes.md"]) == {"doc:old", "doc:a"}
