"""End to end on the real model and real files, into each built-in store (Chroma persistent in
a temp dir, the in-memory store) through the public API: ``ragingest.ingest``, the ``query``
command, ``open_store``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import ragingest
from ragingest.cli.main import main
from ragingest.defaults import SEARCH_EF
from ragingest.errors import CollectionMismatchError
from ragingest.loaders import loader_for
from ragingest.loaders.markdown.source_offsets import indexed_text
from ragingest.schema import validate
from ragingest.vectorstore import open_store
from ragingest.vectorstore.backends import BUILT_IN
from tests.conftest import EXAMPLES
from tests.helpers import ingest_cli
from tests.margins import assert_first_on_any_cpu, required_margin
from tests.stored import stored_rows

pytestmark = pytest.mark.slow

QUESTION = "На сколько дней выдают альбом с красной наклейкой?"
THREE_DAYS = "Для альбомов с красной наклейкой срок выдачи составляет три дня."


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("corpus")
    for path in EXAMPLES.glob("*.md"):
        shutil.copy(path, root / path.name)
    (root / "binary.txt").write_bytes(bytes(range(256)) * 40)  # not text in any encoding
    (root / "empty.md").write_text("  \n\n", encoding="utf-8")
    (root / ".hidden.md").write_text("# secret\n", encoding="utf-8")
    (root / "image.bmp").write_bytes(b"BM\x00\x00")  # no loader reads BMP
    return root


def _ingest(corpus: Path, persist: Path, backend: str, **settings: object):
    return ragingest.ingest(
        [corpus], persist_dir=persist, collection="examples", backend=backend, **settings
    )


@pytest.fixture(scope="module", params=tuple(BUILT_IN))
def ingested(request, corpus, tmp_path_factory) -> tuple[Path, dict, int, str]:
    """The corpus ingested into each built-in store: the directory, the report as JSON data,
    the exit code, the backend's name."""
    persist = tmp_path_factory.mktemp("store")
    report = _ingest(corpus, persist, request.param)
    return persist, report.to_dict(), report.exit_code, request.param


def test_bad_files_are_named_and_the_others_go_in(ingested, corpus):
    _persist, report, code, _backend = ingested
    assert code == 1
    status = {f["path"]: f["status"] for f in report["files"]}
    good = sorted(p.name for p in EXAMPLES.glob("*.md"))
    assert [p for p, s in status.items() if s == "ok"] == good
    assert status["binary.txt"] == "failed" and status["empty.md"] == "failed"
    assert status["image.bmp"] == "unsupported"
    assert ".hidden.md" not in status
    errors = {f["path"]: f["error"] for f in report["files"]}
    assert "not a text file" in errors["binary.txt"]
    assert "no text" in errors["empty.md"]
    assert report["failed"] == 2
    assert report["added"] == sum(f["chunks"] for f in report["files"]) > 0


@pytest.mark.model
def test_memo_question_ranks_three_days_first(ingested, capsys):
    persist, _report, _code, backend = ingested
    capsys.readouterr()
    assert (
        main(
            [
                "query",
                QUESTION,
                "--persist-dir",
                str(persist),
                "--collection",
                "examples",
                "--backend",
                backend,
                "-k",
                "10",
                "--json",
            ]
        )
        == 0
    )
    hits = json.loads(capsys.readouterr().out)
    assert THREE_DAYS in hits[0]["text"]
    assert hits[0]["metadata"]["source"] == "library_memo.md"
    assert hits[0]["score"] > hits[1]["score"]
    assert_first_on_any_cpu(hits)  # why the order above holds on any machine


def test_where_filter_restricts_hits(ingested, capsys):
    persist, _report, _code, backend = ingested
    capsys.readouterr()
    assert (
        main(
            [
                "query",
                QUESTION,
                "--persist-dir",
                str(persist),
                "--collection",
                "examples",
                "--backend",
                backend,
                "--where",
                "source=faq_delivery.md",
                "--json",
            ]
        )
        == 0
    )
    hits = json.loads(capsys.readouterr().out)
    assert hits and {h["metadata"]["source"] for h in hits} == {"faq_delivery.md"}


def test_stored_chunks_have_exact_offsets_and_valid_metadata(ingested, corpus):
    persist, _report, _code, backend = ingested
    rows = stored_rows(persist, "examples", backend)  # ids unique
    metadatas = [meta for _text, meta in rows.values()]
    texts = {}
    for text, meta in rows.values():
        assert validate(meta) == [], meta
        source = meta["source"]
        if source not in texts:
            document = next(loader_for(corpus / source, corpus).lazy_load())
            texts[source] = indexed_text(document.page_content, document.metadata)
        assert texts[source][meta["start_index"] : meta["end_index"]] == text
    by_source = {}
    for meta in metadatas:
        by_source.setdefault(meta["source"], []).append(meta)
    regulation = by_source["regulation_returns.md"]
    assert {m["title"] for m in regulation} == {"Регламент возврата и обмена товаров"}
    assert {m["doc_date"] for m in regulation} == {"2026-03-01"}
    assert {m["language"] for m in regulation} == {"ru"}
    assert {m["language"] for m in by_source["note_english.md"]} == {"en"}
    long_section = [m for m in by_source["instruction_crm.md"] if m["strategy"] == "recursive"]
    assert len(long_section) >= 2  # the >1000-token section is cut
    assert all(m["h2"] == "Настройка вебхуков и полей" for m in long_section)
    assert max(m["token_count"] for m in metadatas) <= 512


def test_rerun_adds_nothing(ingested, corpus):
    persist, _report, _code, backend = ingested
    again = _ingest(corpus, persist, backend)
    assert (again.added, again.deleted, again.embeddings_computed) == (0, 0, 0)
    assert again.skipped > 0


def test_other_model_is_refused(ingested, corpus, capsys):
    persist, _report, _code, backend = ingested
    minilm = "sentence-transformers/all-MiniLM-L6-v2"
    with pytest.raises(CollectionMismatchError, match="was built with model 'intfloat/mult"):
        _ingest(corpus, persist, backend, model=minilm)
    capsys.readouterr()
    code = ingest_cli(corpus, persist, "examples", "--backend", backend, "--model", minilm)
    assert code == 2
    assert "was built with model 'intfloat/multilingual-e5-small'" in capsys.readouterr().err


def test_a_new_collection_searches_cosine_with_search_ef_candidates(ingested):
    persist, _report, _code, backend = ingested
    if backend != "chroma":
        pytest.skip("Chroma's HNSW settings: the other stores search exactly")
    index = open_store(persist, "examples", create=False).index  # a ChromaIndex
    hnsw = index.collection.configuration["hnsw"]
    assert (hnsw["space"], hnsw["ef_search"]) == ("cosine", SEARCH_EF)
    assert SEARCH_EF > 100  # above Chroma's own default, which missed exact top-5 hits


@pytest.mark.model
def test_langchain_app_opens_the_collection_as_a_retriever(ingested):
    persist, _report, _code, backend = ingested
    store = open_store(persist, "examples", create=False, backend=backend)
    docs = store.as_retriever(search_kwargs={"k": 2}).invoke(QUESTION)
    assert THREE_DAYS in docs[0].page_content
    # on any CPU: the runner-up's cosine distance is larger by the margin
    (_, best), (_, runner_up) = store.similarity_search_with_score(QUESTION, k=2)
    assert runner_up - best >= required_margin()
