"""Scheduled re-indexing, in process: real model, each built-in store (``store_backend``:
Chroma in temp dirs, the in-memory store) through ``ragingest.ingest``.

Unchanged files are not parsed, identical text is embedded once, a changed file gets only its
changed texts embedded and its stale chunks deleted, a deleted file's chunks go, a model change
is refused unless --rebuild, which swaps in a new collection. Interrupted writes (an exception
between the store and the record manager) are finished by the next run.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

import ragingest
from ragingest.cli.main import main
from ragingest.cli.watch import parse_interval
from ragingest.errors import CollectionMismatchError
from ragingest.models.embeddings import SentenceTransformerEmbeddings
from ragingest.pipeline import runlog
from ragingest.splitters.factory import SplitSettings, base_splitter
from ragingest.vectorstore import open_store
from ragingest.vectorstore.backends import open_backend
from ragingest.vectorstore.records.aliases import resolve_collection
from ragingest.vectorstore.records.record_manager import IndexRecords, record_manager
from tests.conftest import EXAMPLES
from tests.splitting import split_file
from tests.stored import stored_rows

pytestmark = pytest.mark.slow

MINILM = "sentence-transformers/all-MiniLM-L6-v2"

_WORDS = (
    "склад заказ доставка возврат клиент оплата курьер пункт выдачи срок товар магазин "
    "менеджер заявка договор счёт накладная упаковка гарантия ремонт обмен скидка акция "
    "order delivery refund invoice warehouse parcel courier pickup return policy"
).split()


def paragraph(rng: random.Random, words: int = 45) -> str:
    text = " ".join(rng.choice(_WORDS) for _ in range(words))
    return text[0].upper() + text[1:] + "."


def document(rng: random.Random, index: int, sections: int = 4) -> str:
    parts = [f"# Документ {index}\n"]
    for s in range(sections):
        parts.append(f"## Раздел {index}.{s}\n")
        parts += [paragraph(rng), "", paragraph(rng), ""]
    return "\n".join(parts)


def make_corpus(root: Path, files: int, seed: int = 7) -> Path:
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    for i in range(files):
        (root / f"doc_{i:02d}.md").write_text(document(rng, i), encoding="utf-8")
    return root


def ingest_args(corpus: Path, persist: Path, *extra: str, collection: str = "kbase") -> list[str]:
    return [
        "ingest",
        str(corpus),
        "--persist-dir",
        str(persist),
        "--collection",
        collection,
        "--no-progress",
        *extra,
    ]


def run_ingest(corpus: Path, persist: Path, *extra: str, collection: str = "kbase") -> dict:
    """``ragingest ingest`` in process; the JSON report (with the exit code under "code")."""
    report = persist.parent / f"{persist.name}-report.json"
    code = main(
        [*ingest_args(corpus, persist, *extra, collection=collection), "--report", str(report)]
    )
    data = json.loads(report.read_text(encoding="utf-8"))
    data["code"] = code
    return data


def ingest_into(
    backend: str, corpus: Path, persist: Path, collection: str = "kbase", **settings: Any
) -> dict:
    """``ragingest.ingest`` into the ``backend`` store; the report as ``run_ingest``'s."""
    report = ragingest.ingest(
        [corpus], persist_dir=persist, collection=collection, backend=backend, **settings
    )
    return {**report.to_dict(), "code": report.exit_code}


def snapshot(
    persist: Path, collection: str = "kbase", embeddings: bool = False, *, backend: str = "chroma"
) -> dict[str, Any]:
    """id → (text, metadata[, vector]) of the collection serving ``collection``."""
    return stored_rows(persist, collection, backend, vectors=embeddings)


def by_source(rows: dict[str, Any]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for key, (_text, meta, *_) in rows.items():
        out.setdefault(meta["source"], set()).add(key)
    return out


@pytest.fixture(scope="module")
def e5_splitter():
    return base_splitter(SplitSettings(), info=SentenceTransformerEmbeddings().info)


def embed_texts(path: Path, root: Path, splitter) -> set[str]:
    return {doc.embed_text for doc in split_file(path, root, splitter)}


def test_unchanged_examples_second_run_parses_and_embeds_nothing(
    tmp_path, count_parses, store_backend
):
    corpus = tmp_path / "examples"
    shutil.copytree(EXAMPLES, corpus)
    persist = tmp_path / "db"
    first = ingest_into(store_backend, corpus, persist)
    files = sorted(f["path"] for f in first["files"])
    stored = snapshot(persist, backend=store_backend)
    assert first["code"] == 0
    assert [f["status"] for f in first["files"]] == ["ok"] * len(files)
    assert sorted(count_parses) == sorted(Path(f).name for f in files)
    assert first["added"] == len(stored) == sum(f["chunks"] for f in first["files"]) > 0
    assert first["embeddings_computed"] == len(stored)

    count_parses.clear()
    second = ingest_into(store_backend, corpus, persist)
    assert count_parses == []
    assert (second["added"], second["deleted"], second["updated"]) == (0, 0, 0)
    assert (second["embeddings_computed"], second["embeddings_cached"]) == (0, 0)
    assert second["skipped"] == len(stored)
    assert [f["status"] for f in second["files"]] == ["unchanged"] * len(files)
    assert snapshot(persist, backend=store_backend) == stored

    log = runlog.read(persist / runlog.RUN_LOG, "kbase")
    assert len(log) == 2
    assert {k: log[1][k] for k in ("files_seen", "files_changed", "files_failed")} == {
        "files_seen": len(files),
        "files_changed": 0,
        "files_failed": 0,
    }
    assert (log[1]["chunks_added"], log[1]["chunks_deleted"], log[1]["embeddings_computed"]) == (
        0,
        0,
        0,
    )
    assert log[1]["chunks_skipped"] == len(stored)
    assert log[0]["started"] < log[0]["finished"] <= log[1]["started"] < log[1]["finished"]
    assert log[0]["files_changed"] == len(files) and log[0]["status"] == "ok"


def test_editing_one_paragraph_reembeds_only_changed_texts(
    tmp_path, count_parses, e5_splitter, store_backend
):
    corpus = make_corpus(tmp_path / "corpus", 4)
    persist = tmp_path / "db"
    ingest_into(store_backend, corpus, persist)
    before = snapshot(persist, backend=store_backend)
    old_texts = set().union(*(embed_texts(p, corpus, e5_splitter) for p in corpus.glob("*.md")))

    edited = corpus / "doc_02.md"
    text = edited.read_text(encoding="utf-8")
    old_paragraph = next(line for line in text.split("\n") if len(line) > 100)
    edited.write_text(
        text.replace(old_paragraph, "Новый абзац про сроки хранения заказа в пункте выдачи."),
        encoding="utf-8",
    )
    new_texts = embed_texts(edited, corpus, e5_splitter)
    count_parses.clear()
    report = ingest_into(store_backend, corpus, persist)
    after = snapshot(persist, backend=store_backend)

    assert count_parses == ["doc_02.md"]
    assert report["embeddings_computed"] == len(new_texts - old_texts) >= 1
    old_ids, new_ids = by_source(before), by_source(after)
    assert {s: ids for s, ids in new_ids.items() if s != "doc_02.md"} == {
        s: ids for s, ids in old_ids.items() if s != "doc_02.md"
    }
    added = new_ids["doc_02.md"] - old_ids["doc_02.md"]
    stale = old_ids["doc_02.md"] - new_ids["doc_02.md"]
    assert (report["added"], report["deleted"]) == (len(added), len(stale))
    assert stale and not (stale & set(after))  # stale chunks gone
    assert {after[k][0] for k in new_ids["doc_02.md"]} == {
        d.text for d in split_file(edited, corpus, e5_splitter)
    }
    assert not any(old_paragraph in text for text, _meta in after.values())


def test_deleting_a_file_deletes_its_chunks_only(tmp_path, count_parses, store_backend):
    corpus = make_corpus(tmp_path / "corpus", 4)
    persist = tmp_path / "db"
    ingest_into(store_backend, corpus, persist)
    before = by_source(snapshot(persist, backend=store_backend))
    (corpus / "doc_01.md").unlink()
    count_parses.clear()
    report = ingest_into(store_backend, corpus, persist)
    after = snapshot(persist, backend=store_backend)
    assert count_parses == []
    assert by_source(after) == {s: ids for s, ids in before.items() if s != "doc_01.md"}
    assert (report["deleted"], report["files_deleted"]) == (len(before["doc_01.md"]), 1)
    assert (report["added"], report["embeddings_computed"]) == (0, 0)
    manager = record_manager(persist, "kbase")
    assert sorted(manager.list_keys()) == sorted(after)
    assert "doc_01.md" not in manager.list_groups()


def test_identical_text_is_embedded_once_across_files_and_collections(tmp_path, store_backend):
    corpus = make_corpus(tmp_path / "corpus", 2)
    (corpus / "copy_of_doc_00.md").write_bytes((corpus / "doc_00.md").read_bytes())
    persist = tmp_path / "db"
    report = ingest_into(store_backend, corpus, persist)
    rows = snapshot(persist, backend=store_backend)
    per_source = {s: len(ids) for s, ids in by_source(rows).items()}
    assert per_source["copy_of_doc_00.md"] == per_source["doc_00.md"]
    assert report["added"] == len(rows)
    assert report["embeddings_computed"] == per_source["doc_00.md"] + per_source["doc_01.md"]
    # another collection in the same directory: every vector comes from the cache
    other = ingest_into(store_backend, corpus, persist, collection="kbase2")
    assert (other["embeddings_computed"], other["added"]) == (0, len(rows))
    assert other["embeddings_cached"] == report["embeddings_computed"]
    vectors = snapshot(persist, "kbase", embeddings=True, backend=store_backend)
    assert snapshot(persist, "kbase2", embeddings=True, backend=store_backend) == vectors


def test_model_change_is_refused_without_rebuild_and_swapped_in_with_it(
    tmp_path, capsys, store_backend
):
    corpus = make_corpus(tmp_path / "corpus", 3)
    persist = tmp_path / "db"
    ingest_into(store_backend, corpus, persist)
    before = snapshot(persist, embeddings=True, backend=store_backend)

    with pytest.raises(CollectionMismatchError) as refused:
        ingest_into(store_backend, corpus, persist, model=MINILM)
    assert "was built with model 'intfloat/multilingual-e5-small'" in str(refused.value)
    assert "--rebuild" in str(refused.value)
    assert snapshot(persist, embeddings=True, backend=store_backend) == before

    rebuilt = ingest_into(store_backend, corpus, persist, model=MINILM, rebuild=True)
    assert rebuilt["code"] == 0 and rebuilt["rebuilt"] is True
    # built as kbase__1, swapped in, then renamed to the typed name (``run.settle``)
    assert rebuilt["collection"] == "kbase" == resolve_collection(persist, "kbase")
    assert open_backend(persist, kind=store_backend).names() == {"kbase"}  # the old one went
    assert record_manager(persist, "kbase__1").count() == 0
    after = snapshot(persist, embeddings=True, backend=store_backend)
    old_vectors = {row[2] for row in before.values()}
    assert not any(row[2] in old_vectors for row in after.values())

    clean = tmp_path / "clean"
    ingest_into(store_backend, corpus, clean, model=MINILM)
    assert snapshot(persist, backend=store_backend) == snapshot(clean, backend=store_backend)

    # LangChain apps follow the swap
    store = open_store(persist, "kbase", create=False, backend=store_backend)
    assert store.embeddings.info.name == MINILM
    hits = store.similarity_search("сроки доставки заказа", k=2)
    assert len(hits) == 2 and all(hit.page_content for hit in hits)
    where = ["--persist-dir", str(persist), "--collection", "kbase", "--backend", store_backend]
    capsys.readouterr()
    assert main(["query", "заказ", *where]) == 0
    assert "1. score" in capsys.readouterr().out

    again = ingest_into(store_backend, corpus, persist, model=MINILM, rebuild=True)
    assert (again["rebuilt"], again["added"], again["embeddings_computed"]) == (False, 0, 0)
    capsys.readouterr()
    assert main(["status", *where, "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert (status["physical"], status["model"], status["chunks"]) == (
        "kbase",
        MINILM,
        len(after),
    )
    assert (status["files"], status["files_tracked"], status["consistent"]) == (3, 3, True)
    assert status["last_run"]["chunks_skipped"] == len(after)
    assert status["writer"] is None and status["rebuild_in_progress"] is None


class Crash(Exception):
    pass


def test_interrupted_add_then_changed_file_leaves_no_orphans(tmp_path, monkeypatch, store_backend):
    """The store got a file's new chunks, the record manager didn't (the run died); the file
    changes again before the next run: those chunks must still go."""
    corpus = make_corpus(tmp_path / "corpus", 2)
    persist = tmp_path / "db"
    ingest_into(store_backend, corpus, persist)
    path = corpus / "doc_00.md"
    path.write_text(path.read_text(encoding="utf-8") + "\n## Новый\n\nВерсия два.\n", "utf-8")

    real_update = IndexRecords.update

    def dying_update(self, keys, *, group_ids=None, time_at_least=None):
        if group_ids is not None:
            raise Crash("killed between Chroma and the record manager")
        return real_update(self, keys, group_ids=group_ids, time_at_least=time_at_least)

    monkeypatch.setattr(IndexRecords, "update", dying_update)
    with pytest.raises(Crash):
        ingest_into(store_backend, corpus, persist)
    monkeypatch.undo()
    assert any(
        "Версия два." in t for t, _m in snapshot(persist, backend=store_backend).values()
    )  # the orphan

    path.write_text(path.read_text(encoding="utf-8").replace("два", "три"), "utf-8")
    assert ingest_into(store_backend, corpus, persist)["code"] == 0
    clean = tmp_path / "clean"
    ingest_into(store_backend, corpus, clean)
    assert snapshot(persist, backend=store_backend) == snapshot(clean, backend=store_backend)
    assert ingest_into(store_backend, corpus, persist)["added"] == 0


def test_interrupted_delete_then_reverted_file_loses_nothing(tmp_path, monkeypatch, store_backend):
    """The store lost a file's stale chunks, the record manager still had them (the run died);
    the file is then reverted to the old text: its chunks must come back."""
    corpus = make_corpus(tmp_path / "corpus", 2)
    persist = tmp_path / "db"
    ingest_into(store_backend, corpus, persist)
    path = corpus / "doc_01.md"
    original, stat = path.read_bytes(), path.stat()
    path.write_text("# Другой\n\n## Раздел\n\n" + "Совсем другой текст. " * 30, "utf-8")

    real_delete = IndexRecords.delete_keys

    def dying_delete(self, keys):
        raise Crash("killed between Chroma and the record manager")

    monkeypatch.setattr(IndexRecords, "delete_keys", dying_delete)
    with pytest.raises(Crash):
        ingest_into(store_backend, corpus, persist)
    monkeypatch.setattr(IndexRecords, "delete_keys", real_delete)

    path.write_bytes(original)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert ingest_into(store_backend, corpus, persist)["code"] == 0
    clean = tmp_path / "clean"
    ingest_into(store_backend, corpus, clean)
    assert snapshot(persist, backend=store_backend) == snapshot(clean, backend=store_backend)


def test_watch_reruns_on_change(tmp_path):
    corpus = make_corpus(tmp_path / "corpus", 2)
    persist = tmp_path / "db"
    log_path = persist / runlog.RUN_LOG
    codes: list[int] = []
    argv = ["watch", *ingest_args(corpus, persist)[1:], "--interval", "0.1s", "--max-runs", "2"]
    thread = threading.Thread(target=lambda: codes.append(main(argv)), daemon=True)
    thread.start()
    first_done = threading.Event()

    def wait_for_lines(n: int) -> None:
        while thread.is_alive() and len(runlog.read(log_path)) < n:
            first_done.wait(0.05)

    wait_for_lines(1)
    (corpus / "doc_01.md").write_text(
        "# Новый\n\n## Раздел\n\n" + paragraph(random.Random(1)), encoding="utf-8"
    )
    thread.join(timeout=300)
    assert not thread.is_alive() and codes == [0]
    runs = runlog.read(log_path, "kbase")
    assert [r["files_changed"] for r in runs] == [2, 1]
    assert [r["files_unchanged"] for r in runs] == [0, 1]


def test_parse_interval_and_run_log_tail(tmp_path):
    assert [parse_interval(t) for t in ("10m", "30s", "1h", "250ms", "2", "1.5m")] == [
        600.0,
        30.0,
        3600.0,
        0.25,
        2.0,
        90.0,
    ]
    for bad in ("", "0s", "-1m", "10 minutes"):
        with pytest.raises(ValueError):
            parse_interval(bad)
    path = tmp_path / "runs.jsonl"
    for i in range(300):
        runlog.append(path, {"collection": "a" if i % 3 else "b", "i": i, "pad": "x" * 50})
    assert runlog.last_run(path, "a", block=100)["i"] == 299
    assert runlog.last_run(path, "b", block=100)["i"] == 297
    assert runlog.last_run(path, "c", block=100) is None
    assert [r["i"] for r in runlog.read(path, "b")][-2:] == [294, 297]
