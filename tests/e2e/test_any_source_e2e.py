"""A LangChain app ingests any source (real model, real Chroma on disk, real community
loaders): a folder, a community ``TextLoader``, a ``PyPDFLoader`` PDF and plain Documents;
re-runs it (nothing re-embedded); removes one document (its chunks go); keeps documents added
by hand; and the CLI re-indexes a community loader on a schedule-like second run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from langchain_core.document_loaders import BaseLoader
from langchain_core.documents import Document

import ragingest
from ragingest.errors import MassDeleteError
from ragingest.vectorstore.chroma.store import open_store
from tests import docbuilders as b
from tests.helpers import ingest_cli
from tests.margins import assert_first_on_any_cpu

warnings.filterwarnings(
    "ignore", message=".*langchain-community.*sunset", category=DeprecationWarning
)
community = pytest.importorskip("langchain_community.document_loaders")
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
COLLECTION = "any-source"
RENEWAL = "Абонемент продлевают на один год по паспорту читателя в любом филиале библиотеки."
FINES = "За каждый день просрочки начисляется пеня десять рублей, но не больше цены книги."


def faq(*keys: str) -> list[Document]:
    texts = {"faq/renewal": RENEWAL, "faq/fines": FINES}
    return [Document(page_content=texts[k], metadata={"source": k, "topic": "faq"}) for k in keys]


def chunks_of(store, source: str) -> list[tuple[str, dict]]:
    got = store.get(where={"source": source}, include=["documents", "metadatas"])
    return sorted(
        zip(got["documents"], got["metadatas"], strict=True), key=lambda c: c[1]["start_index"]
    )


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("any")
    folder = root / "kb"
    folder.mkdir()
    (folder / "hours.md").write_text(
        "# Часы работы\n\nБиблиотека открыта с девяти до восемнадцати, в субботу до шестнадцати.\n",
        encoding="utf-8",
    )
    notes = root / "notes.md"
    notes.write_text(
        "---\ntitle: Правила зала\ndate: 2026-04-01\nauthor: Петрова\n---\n"
        "# Читальный зал\n\nВ читальном зале книги выдают без абонемента, только на месте.\n",
        encoding="utf-8",
    )
    pdf = b.build_pdf(root / "regulation.pdf")
    return {"root": root, "folder": folder, "notes": notes, "pdf": pdf, "db": root / "db"}


def sources(corpus, *keys: str) -> list:
    return [
        corpus["folder"],
        community.TextLoader(str(corpus["notes"]), encoding="utf-8"),
        community.PyPDFLoader(str(corpus["pdf"])),
        faq(*keys),
    ]


@pytest.mark.model
def test_langchain_app_ingests_any_source_and_reindexes_it(corpus):
    db = corpus["db"]
    first = ragingest.ingest(
        sources(corpus, "faq/renewal", "faq/fines"), persist_dir=db, collection=COLLECTION
    )
    assert first.failed == 0
    assert [f.status for f in first.files] == ["ok"] * 5
    assert first.embeddings_computed == first.added > 0

    store = open_store(db, COLLECTION, create=False)
    pdf_chunks = chunks_of(store, str(corpus["pdf"]))
    text = " ".join(t for t, _m in pdf_chunks)
    assert b.PDF_HEADER not in text and "Стр. " not in text and "....." not in text
    assert b.PDF_KNOWN_SENTENCE in text
    assert all(1 <= m["page_start"] <= m["page_end"] <= 3 for _t, m in pdf_chunks)
    assert any((m["page_start"], m["page_end"]) == (2, 3) for _t, m in pdf_chunks)
    assert {m["title"] for _t, m in pdf_chunks} == {b.PDF_TITLE}

    ((note_text, note_meta),) = chunks_of(store, str(corpus["notes"]))
    assert (
        note_text
        == "# Читальный зал\n\nВ читальном зале книги выдают без абонемента, только на месте."
    )
    assert (note_meta["author"], note_meta["doc_date"]) == ("Петрова", "2026-04-01")
    ((renewal, renewal_meta),) = chunks_of(store, "faq/renewal")
    assert (renewal, renewal_meta["topic"]) == (RENEWAL, "faq")
    assert [t for t, _m in chunks_of(store, "hours.md")] == [
        "# Часы работы\n\nБиблиотека открыта с девяти до восемнадцати, в субботу до шестнадцати."
    ]
    total = len(store.get(include=[])["ids"])

    again = ragingest.ingest(
        sources(corpus, "faq/renewal", "faq/fines"), persist_dir=db, collection=COLLECTION
    )
    assert [f.status for f in again.files] == ["unchanged"] * 5
    assert (again.embeddings_computed, again.added, again.deleted) == (0, 0, 0)
    assert len(store.get(include=[])["ids"]) == total

    store.add_documents(
        [
            Document(
                page_content="Добавлено вручную: гардероб работает до закрытия.",
                metadata={"source": "by-hand"},
            )
        ],
        ids=["by-hand-1"],
    )
    fines = len(chunks_of(store, "faq/fines"))
    third = ragingest.ingest(sources(corpus, "faq/renewal"), persist_dir=db, collection=COLLECTION)
    assert (third.embeddings_computed, third.added) == (0, 0)
    assert (third.files_deleted, third.deleted) == (1, fines)
    assert chunks_of(store, "faq/fines") == []
    assert len(chunks_of(store, "faq/renewal")) == 1
    assert store.get(ids=["by-hand-1"])["documents"] == [
        "Добавлено вручную: гардероб работает до закрытия."
    ]
    assert len(store.get(include=[])["ids"]) == total - fines + 1

    hits = ragingest.retriever(db, COLLECTION, k=10, parents=False).invoke(
        "Сколько времени на ответ на письмо с пометкой срочно?"
    )
    assert hits[0].metadata["source"] == str(corpus["pdf"])
    assert hits[0].metadata["page_start"] == 3
    assert_first_on_any_cpu(hits)


def test_the_app_splits_and_retrieves_the_langchain_way(corpus):
    """The same app, after the runs above: LangChain's splitter arguments on a community
    loader's output, exactly k passages whose ids resolve in the store, and MMR."""
    from ragingest.splitters import HeadingFirstSplitter

    splitter = HeadingFirstSplitter(
        headers_to_split_on=[("#", "Header 1"), ("##", "Header 2")],
        length_function=len,
        chunk_size=300,
    )
    loaded = community.TextLoader(str(corpus["notes"]), encoding="utf-8").load()
    (chunk,) = splitter.split_documents(loaded)
    assert chunk.page_content == (
        "# Читальный зал\n\nВ читальном зале книги выдают без абонемента, только на месте."
    )
    assert chunk.metadata["Header 1"] == "Читальный зал"
    assert chunk.metadata["author"] == "Петрова"  # the front matter became metadata

    db = corpus["db"]
    store = open_store(db, COLLECTION, create=False)
    question = "Когда открыта библиотека и как продлить абонемент?"
    for k in (1, 2, 3):
        docs = ragingest.retriever(db, COLLECTION, k=k).invoke(question)
        assert len(docs) == k
        found = store.get_by_ids([d.id for d in docs])  # Chroma returns them in its own order
        assert sorted(d.id for d in found) == sorted(d.id for d in docs)
    mmr = ragingest.retriever(
        db, COLLECTION, k=3, search_type="mmr", fetch_k=10, lambda_mult=0.3
    ).invoke(question)
    assert len(mmr) == 3 and len({d.id for d in mmr}) == 3


def test_cli_reindexes_a_community_loader_on_a_schedule(corpus, tmp_path):
    catalogue = tmp_path / "catalogue.csv"
    catalogue.write_text("name,price\nКнига,500\nАльбом,900\n", encoding="utf-8")
    db, report = tmp_path / "db", tmp_path / "first.json"
    loader = ("--loader", "langchain_community.document_loaders:CSVLoader")
    loader_args = ("--loader-arg", f"file_path={catalogue}", "--loader-arg", "encoding=utf-8")
    code = ingest_cli(None, db, "cron-kb", *loader, *loader_args, "--report", report)
    assert code == 0
    first = json.loads(report.read_text(encoding="utf-8"))
    assert first["added"] == first["embeddings_computed"] == 2
    (tmp_path / ".ragingest.toml").write_text(
        '[[sources]]\nloader = "CSVLoader"\n'
        'args = { file_path = "catalogue.csv", encoding = "utf-8" }\n',
        encoding="utf-8",
    )
    second_report = tmp_path / "second.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ragingest.cli.main",
            "ingest",
            "--persist-dir",
            str(db),
            "--collection",
            "cron-kb",
            "--no-progress",
            "--report",
            str(second_report),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    second = json.loads(second_report.read_text(encoding="utf-8"))
    # the second run is a new process that reads ragingest's code version again
    # (``pipeline.stamps``): a source file of ragingest edited while the suite runs makes it
    # parse again, as designed; the message says what each run saw
    seen = (first["files"], second["files"], done.stdout, done.stderr[-2000:])
    assert [f["status"] for f in second["files"]] == ["unchanged"], seen
    assert (second["added"], second["embeddings_computed"], second["deleted"]) == (0, 0, 0)
    assert "1 ingested (1 unchanged, not parsed)" in done.stdout


class Flaky(BaseLoader):
    """A remote source: documents when it answers, an error when it does not."""

    def __init__(self, up: bool) -> None:
        self.up = up

    def lazy_load(self):
        if not self.up:
            raise ConnectionError("wiki.example: connection refused")
        yield Document(page_content=RENEWAL, metadata={"source": "wiki/renewal"})


def test_a_failing_loader_keeps_its_last_good_chunks(tmp_path):
    db = tmp_path / "db"
    first = ragingest.ingest([Flaky(up=True)], persist_dir=db, collection="flaky-kb")
    assert (first.added, first.failed) == (1, 0)
    down = ragingest.ingest([Flaky(up=False)], persist_dir=db, collection="flaky-kb")
    assert [(f.path, f.status, f.error) for f in down.files] == [
        ("Flaky", "failed", "the loader failed: ConnectionError: wiki.example: connection refused")
    ]
    assert (down.deleted, down.files_deleted, down.exit_code) == (0, 0, 1)
    store = open_store(db, "flaky-kb", create=False)
    assert [t for t, _m in chunks_of(store, "wiki/renewal")] == [RENEWAL]
    with pytest.raises(MassDeleteError):  # every source of the collection: confirm it
        ragingest.ingest([], persist_dir=db, collection="flaky-kb")
    assert [t for t, _m in chunks_of(store, "wiki/renewal")] == [RENEWAL]
    gone = ragingest.ingest([], persist_dir=db, collection="flaky-kb", allow_mass_delete=True)
    assert (gone.files_deleted, gone.deleted) == (1, 1)
    assert chunks_of(store, "wiki/renewal") == []
