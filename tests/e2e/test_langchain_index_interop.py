"""LangChain's own ``index()`` writing into a ragingest collection (real model, real Chroma,
LangChain's ``SQLRecordManager`` over the same records database): ``status`` tells those
documents apart and stays consistent, a run never deletes them, and a collection other code
made is refused with the way out, as a change of settings is."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_chroma import Chroma
from langchain_classic.indexes import SQLRecordManager
from langchain_core.documents import Document
from langchain_core.indexing import index

from ragingest import defaults
from ragingest.cli.main import main
from ragingest.cli.status import collection_status, render
from ragingest.models.embeddings import SentenceTransformerEmbeddings
from ragingest.vectorstore.chroma.store import chroma_client
from ragingest.vectorstore.records.record_manager import record_manager

MODEL = defaults.MODEL  # the ONNX e5 model: the core runs it (no torch)
APP_DOCS = [
    Document(page_content="Beta note from the app.", metadata={"source": "app/notes.txt"}),
    Document(page_content="Gamma note from the app.", metadata={"source": "app/more.txt"}),
]


@pytest.fixture
def ingested(tmp_path) -> tuple[Path, Path]:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Отпуск\n\n## Сроки\n\nОтпуск согласуют за две недели.\n", "utf-8")
    persist = tmp_path / "db"
    assert main(ingest(docs, persist)) == 0
    return docs, persist


def ingest(docs: Path, persist: Path, *extra: str, collection: str = "examples") -> list[str]:
    store = ["--persist-dir", str(persist), "--collection", collection, "--model", MODEL]
    return ["ingest", str(docs), *store, "--no-progress", *extra]


def langchain_index(persist: Path, namespace: str, collection: str = "examples", **kw) -> dict:
    """What a LangChain app does: its own Chroma object and record manager, ``index()``."""
    store = Chroma(
        collection_name=collection,
        persist_directory=str(persist),
        embedding_function=SentenceTransformerEmbeddings(MODEL),
    )
    manager = SQLRecordManager(namespace, db_url=f"sqlite:///{persist}/ragingest_records.sqlite")
    manager.create_schema()
    return index(APP_DOCS, manager, store, cleanup="incremental", source_id_key="source", **kw)


def chroma_count(persist: Path, physical: str = "examples") -> int:
    return chroma_client(persist).get_collection(physical).count()


@pytest.mark.parametrize("key_encoder", ["sha1", "sha256"])
def test_index_under_its_own_namespace_is_told_apart_and_kept(ingested, key_encoder):
    docs, persist = ingested
    assert langchain_index(persist, "langchain/examples", key_encoder=key_encoder)["num_added"] == 2
    status = collection_status(persist, "examples")
    assert (status["chunks"], status["records"], status["consistent"]) == (3, 1, True)
    assert status["not_by_ragingest"] == {
        "chunks": 2,
        "recorded_here": 0,
        "recorded_elsewhere": {"langchain/examples": 2},
        "namespace": "chroma/examples",
    }
    text = render(status)
    assert "(consistent)" in text and "NOT consistent" not in text
    assert "not by ragingest: 2 documents in Chroma not written by ragingest; 2 of them " in text
    assert main(ingest(docs, persist)) == 0  # nothing to repair, nothing of the app's deleted
    assert chroma_count(persist) == 3
    assert collection_status(persist, "examples")["consistent"] is True


def test_index_through_ragingests_record_manager_is_not_deleted_as_gone(ingested, tmp_path):
    docs, persist = ingested
    assert langchain_index(persist, "chroma/examples")["num_added"] == 2
    status = collection_status(persist, "examples")
    assert (status["consistent"], status["not_by_ragingest"]["recorded_here"]) == (True, 2)
    report = tmp_path / "report.json"
    assert main([*ingest(docs, persist), "--report", str(report)]) == 0
    assert '"deleted_sources": []' in report.read_text("utf-8")
    assert chroma_count(persist) == 3
    kept = record_manager(persist, "examples").list_groups()
    assert kept == ["a.md", "app/more.txt", "app/notes.txt"]


def test_other_chunk_settings_are_refused_with_the_way_out(ingested, capsys):
    docs, persist = ingested
    langchain_index(persist, "langchain/examples")
    assert main(ingest(docs, persist, "--chunk-size", "150")) == 2
    err = capsys.readouterr().err
    assert "other splitter settings (chunk_size: 200 (default) -> 150)" in err
    assert "`ingest --rebuild`" in err


def test_a_collection_other_code_made_is_refused_then_rebuilt(ingested, capsys):
    docs, persist = ingested
    langchain_index(persist, "chroma/notes", collection="notes")
    assert main(ingest(docs, persist, collection="notes")) == 2
    err = capsys.readouterr().err
    assert "collection 'notes' was not built by ragingest: it records no model" in err
    assert "`ingest --rebuild`" in err
    assert chroma_count(persist, "notes") == 2  # nothing written, nothing deleted
    assert main(ingest(docs, persist, "--rebuild", collection="notes")) == 0
    status = collection_status(persist, "notes")
    assert (status["model"], status["settings"]["chunk_size"]) == (MODEL, None)
    assert (status["chunks"], status["consistent"], status["not_by_ragingest"]) == (1, True, None)
    capsys.readouterr()
    assert main(ingest(docs, persist, "--chunk-size", "150", collection="notes")) == 2
    assert "other splitter settings (chunk_size: 200 (default) -> 150)" in capsys.readouterr().err
