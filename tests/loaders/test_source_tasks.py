"""``loaders.inputs.sources``: any source → paths or document sources → one task per source key."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from langchain_core.document_loaders import BaseLoader
from langchain_core.documents import Document

from ragingest.loaders import TextLoader as OurTextLoader
from ragingest.loaders.inputs.source_items import split_sources
from ragingest.loaders.inputs.sources import (
    GROUP_PREFIX,
    SourceError,
    content_hash,
    unique_tasks,
)

warnings.filterwarnings(
    "ignore", message=".*langchain-community.*sunset", category=DeprecationWarning
)
community = pytest.importorskip("langchain_community.document_loaders")


class Failing(BaseLoader):
    def lazy_load(self):
        yield Document(page_content="первый", metadata={"source": "x"})
        raise ConnectionError("server went away")


class Keyless(BaseLoader):
    def lazy_load(self):
        yield Document(page_content="без ключа")


def test_split_sources_keeps_kinds_and_order(tmp_path):
    note = tmp_path / "note.md"
    note.write_text("# Заметка\n\nТекст.\n", encoding="utf-8")
    a = Document(page_content="А", metadata={"source": "a"})
    c = Document(page_content="В", metadata={"source": "c"})
    paths, sources = split_sources(
        [
            str(tmp_path),
            a,
            Document(page_content="Б", metadata={"source": "b"}),
            community.TextLoader(str(note)),
            note,
            (d for d in [c]),
            OurTextLoader(note),
        ]
    )
    assert paths == [tmp_path, note]
    assert [s.name for s in sources] == [
        "documents",
        f"TextLoader({note})",
        "documents#2",
        f"TextLoader({note})#2",
    ]
    assert [t.key for t in sources[0].tasks()] == ["a", "b"]
    assert [t.key for t in sources[2].tasks()] == ["c"]


def test_single_source_values_are_accepted():
    paths, sources = split_sources("docs")
    assert (paths, sources) == ([Path("docs")], [])
    _paths, (only,) = split_sources(Document(page_content="Т", metadata={"source": "t"}))
    assert [t.key for t in only.tasks()] == ["t"]


def test_other_values_are_refused_by_name():
    with pytest.raises(TypeError, match="cannot ingest int 42: give paths, LangChain"):
        split_sources([42])


def test_tasks_group_by_source_and_hash_deterministically(tmp_path):
    docs = [
        Document(page_content="Раз.", metadata={"source": "one", "n": 1}),
        Document(page_content="Два.", metadata={"source": "two"}),
        Document(page_content="Ещё раз.", metadata={"source": "one", "n": 2}),
    ]
    (_p, (source,)) = split_sources([docs])
    first = source.tasks()
    again = split_sources([[d.model_copy(deep=True) for d in docs]])[1][0].tasks()
    assert [(t.key, len(t.documents), t.group) for t in first] == [
        ("one", 2, GROUP_PREFIX + "one"),
        ("two", 1, GROUP_PREFIX + "two"),
    ]
    assert [t.content_hash for t in first] == [t.content_hash for t in again]
    assert first[0].size == len("Раз.") + len("Ещё раз.")
    changed = [d.model_copy(deep=True) for d in docs]
    changed[2].metadata["n"] = 3  # metadata counts: a changed key re-indexes the source
    assert split_sources([changed])[1][0].tasks()[0].content_hash != first[0].content_hash
    assert content_hash(first[1].documents) == first[1].content_hash


def test_given_documents_need_a_source_key():
    (_p, (source,)) = split_sources([[Document(page_content="ничей")]])
    with pytest.raises(SourceError, match=r"documents: document 0 has no metadata\['source'\]"):
        source.tasks()


def test_loader_documents_without_source_take_the_loader_name():
    (_p, (source,)) = split_sources([Keyless()])
    assert [t.key for t in source.tasks()] == ["Keyless"]


def test_a_failing_loader_is_named_with_the_reason():
    (_p, (source,)) = split_sources([Failing()])
    with pytest.raises(SourceError) as caught:
        source.tasks()
    assert caught.value.path == "Failing"
    assert caught.value.reason == "the loader failed: ConnectionError: server went away"
    assert caught.value.kind == "source_failed"


def test_clashing_keys_of_two_sources_are_reported(tmp_path):
    one = [Document(page_content="первый", metadata={"source": "same"})]
    two = [Document(page_content="второй", metadata={"source": "same"})]
    _paths, sources = split_sources([one, two])
    results = list(unique_tasks(t for s in sources for t in s.tasks()))
    assert results[0].key == "same"
    assert isinstance(results[1], SourceError)
    assert results[1].path == "documents#2"
    assert "clash with those of documents" in results[1].reason
