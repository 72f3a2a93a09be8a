"""Readers stay exact at the edges of the write path (real model; Chroma on disk, and the
in-memory store too where a test takes ``store_backend``): a symlink inside the root is judged
by the file it leads to, a permission change stopped half-way is put right by the next run,
pages of one document keep their own readers, a source whose loader fails loses a revoked
reader anyway, and the run log records permission changes."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.document_loaders import BaseLoader
from langchain_core.documents import Document

from ragingest.pipeline.access_policy import AccessPolicy, AccessRule
from ragingest.pipeline.access_sync import ruled_source
from ragingest.schema import NO_READER, PUBLIC_PRINCIPAL
from ragingest.vectorstore.collection import Collection
from ragingest.vectorstore.records.aliases import resolve_collection
from tests.pipeline.test_access_runs import readers_of, run, states, stored, write
from tests.stored import stored_rows

pytestmark = pytest.mark.slow

PAGE = "Section {n}\n\nThe words of page {n} are meant for its own readers and nobody else here.\n"


def rules(**grants: list[str]) -> AccessPolicy:
    """``hr=["hr"]`` → a rule ``hr/**`` for group hr; ``pub`` is always public."""
    found = [AccessRule(f"{k}/**", groups=tuple(v)) for k, v in grants.items()]
    return AccessPolicy((*found, AccessRule("pub/**", public=True)))


def test_a_symlink_inside_the_root_is_judged_by_its_target(tmp_path):
    root = tmp_path / "data"
    write(root, "hr/salaries.md", "Salaries are paid on the fifth of each month")
    (root / "pub").mkdir()
    os.symlink("../hr/salaries.md", root / "pub/note.md")
    store = tmp_path / "store"
    run(root, store, rules(hr=["hr"]))
    assert readers_of(store, "pub/note.md") == {("group:hr",)}  # not the public rule's
    assert readers_of(store, "hr/salaries.md") == {("group:hr",)}


def test_a_symlinks_unix_readers_are_its_targets_folders(tmp_path):
    shared = Path(tempfile.mkdtemp(prefix="ragingest-share-"))  # pytest's folders are 0700
    try:
        os.chmod(shared, 0o755)
        write(shared, "secret/s.md", "The launch code is kept in the safe of the office")
        os.chmod(shared / "secret/s.md", 0o644)
        os.chmod(shared / "secret", 0o700)  # only the owner may enter
        (shared / "open").mkdir(mode=0o755)
        os.symlink("../secret/s.md", shared / "open/n.md")
        store = tmp_path / "store"
        run(shared, store, AccessPolicy(unix=True))
        got = readers_of(store, "open/n.md")
        assert len(got) == 1 and PUBLIC_PRINCIPAL not in next(iter(got)), got
        assert got == readers_of(store, "secret/s.md")
    finally:
        os.chmod(shared / "secret", 0o755)
        shutil.rmtree(shared, ignore_errors=True)


def test_a_links_rules_are_its_targets_inside_the_root_and_its_own_outside(tmp_path):
    root, outside = tmp_path / "data", tmp_path / "elsewhere"
    (root / "hr").mkdir(parents=True)
    (root / "pub").mkdir()
    outside.mkdir()
    (root / "hr/s.md").write_text("x", "utf-8")
    (outside / "o.md").write_text("x", "utf-8")
    os.symlink("../hr/s.md", root / "pub/in.md")
    os.symlink(outside / "o.md", root / "pub/out.md")
    assert ruled_source("pub/in.md", root / "pub/in.md") == "hr/s.md"
    assert ruled_source("pub/out.md", root / "pub/out.md") == "pub/out.md"
    assert ruled_source("hr/s.md", root / "hr/s.md") == "hr/s.md"
    assert ruled_source("data/pub/in.md", root / "pub/in.md") == "data/hr/s.md"  # two roots
    assert ruled_source("doc:wiki", None) == "doc:wiki"


class Stopped(BaseException):
    """A run killed between two writes (as ``kill -9`` would stop it)."""


def test_a_permission_change_stopped_half_way_is_put_right(tmp_path, monkeypatch, store_backend):
    root = tmp_path / "data"
    write(root, "hr/pay.md", "Salaries are paid on the fifth of each month")
    write(root, "pub/handbook.md", "The office opens at nine and closes at six")
    store = tmp_path / "store"
    run(root, store, rules(hr=["hr"]), store_backend)
    widening = AccessPolicy((AccessRule("hr/**", public=True), AccessRule("pub/**", public=True)))
    written = Collection.set_access

    def stop_after_the_chunks(self, ids, access):
        written(self, ids, access)
        raise Stopped  # before the file state is written

    monkeypatch.setattr(Collection, "set_access", stop_after_the_chunks)
    with pytest.raises(Stopped):
        run(root, store, widening, store_backend)
    monkeypatch.undo()
    # the chunks went first
    assert readers_of(store, "hr/pay.md", store_backend) == {(PUBLIC_PRINCIPAL,)}

    # the operator puts the config back
    reverted = run(root, store, rules(hr=["hr"]), store_backend)
    assert reverted.access_changed == ["hr/pay.md"]
    assert readers_of(store, "hr/pay.md", store_backend) == {("group:hr",)}
    assert states(store)["hr/pay.md"] == ("group:hr",)
    assert run(root, store, rules(hr=["hr"]), store_backend).access_changed == []


def pages(source: str, *readers: list[str] | None) -> list[Document]:
    """A connector's pages of one document, page ``i`` naming ``readers[i]`` (None: none)."""
    out = []
    for i, names in enumerate(readers):
        meta: dict[str, object] = {"source": source, "page": i}
        if names is not None:
            meta["access"] = names
        out.append(Document("\n".join([PAGE.format(n=i + 1)] * 3), metadata=meta))
    return out


def chunk_readers(
    store: Path, source: str, backend: str = "chroma"
) -> list[tuple[int, int, list[str], list[str]]]:
    """(page_start, page_end, chunk's access, its parent's access) of each chunk of ``source``."""
    from ragingest.vectorstore.records.parents import ParentStore

    physical = resolve_collection(store, "kb")
    parents = ParentStore(store, physical)
    out = []
    for _text, meta in stored_rows(store, "kb", backend, where={"source": source}).values():
        parent = parents.mget([meta["parent_id"]])[0]
        assert parent is not None
        readers = (meta["access"], parent.metadata["access"])
        out.append((meta["page_start"], meta["page_end"], *readers))
    return sorted(out)


def test_pages_of_one_document_keep_their_own_readers(tmp_path, store_backend):
    store = tmp_path / "store"
    docs = pages("wiki/report", ["group:hr"], ["group:hr", "group:ceo"], ["group:hr", "group:ceo"])
    docs += pages("wiki/partly", ["group:hr"], None)
    report = run(docs, store, AccessPolicy(default="public"), store_backend)
    assert report.failed == 0
    found = chunk_readers(store, "wiki/report", store_backend)
    assert found and all(PUBLIC_PRINCIPAL not in a and PUBLIC_PRINCIPAL not in p
                         for *_pages, a, p in found)  # fmt: skip
    for first, _last, access, parent in found:
        assert "group:hr" in access and set(parent) <= set(access)
        if first == 1:  # page one is hr's alone, whatever else a chunk or section holds
            assert access == ["group:hr"] and parent == ["group:hr"]
    assert any(access == ["group:ceo", "group:hr"] for *_pages, access, _p in found)
    # a page without a list: nobody, never public
    partly = chunk_readers(store, "wiki/partly", store_backend)
    assert partly and all(PUBLIC_PRINCIPAL not in a for *_pages, a, _p in partly)
    assert all(a == [NO_READER] for _first, last, a, _p in partly if last == 2)

    again = run(docs, store, AccessPolicy(default="public"), store_backend)
    assert again.access_changed == [] and again.embeddings_computed == 0
    assert chunk_readers(store, "wiki/report", store_backend) == found

    docs[1].metadata["access"] = ["group:hr"]  # ceo loses page two: the same text and ids
    revoked = run(docs, store, AccessPolicy(default="public"), store_backend)
    assert revoked.embeddings_computed == 0
    got = chunk_readers(store, "wiki/report", store_backend)
    assert all("group:ceo" not in a for _first, last, a, _p in got if last <= 2), got


class Wiki(BaseLoader):
    """A connector whose server is down while ``down`` exists."""

    def __init__(self, down: str) -> None:
        self.down = down

    def lazy_load(self) -> Iterator[Document]:
        if os.path.exists(self.down):
            raise ConnectionError("the wiki server is down")
        yield Document(
            "# Pay\n\nSalaries are paid on the fifth of each month, every word matters here.",
            metadata={"source": "wiki/pay.md"},
        )


def test_a_failed_source_does_not_keep_a_revoked_reader(tmp_path, store_backend):
    store = tmp_path / "store"
    down = tmp_path / "down"
    loader = Wiki(str(down))
    run([loader], store, rules(wiki=["hr"]), store_backend)
    assert readers_of(store, "wiki/pay.md", store_backend) == {("group:hr",)}

    down.touch()
    # hr loses it while the server is down
    moved = run([loader], store, rules(wiki=["ceo"]), store_backend)
    assert [f.status for f in moved.files] == ["failed"]
    hidden = {(NO_READER,)}  # until read again, and never wider than it held
    assert readers_of(store, "wiki/pay.md", store_backend) == hidden
    assert moved.access_changed == ["doc:wiki/pay.md"]
    widened = run([loader], store, rules(wiki=["hr", "ceo"]), store_backend)
    assert readers_of(store, "wiki/pay.md", store_backend) == hidden

    down.unlink()
    back = run([loader], store, rules(wiki=["ceo"]), store_backend)
    assert back.failed == 0 and widened.failed == 1
    assert readers_of(store, "wiki/pay.md", store_backend) == {("group:ceo",)}


class PagedWiki(BaseLoader):
    """A connector's paged document, each page its own readers; down while ``down`` exists."""

    def __init__(self, down: str) -> None:
        self.down = down

    def lazy_load(self) -> Iterator[Document]:
        if os.path.exists(self.down):
            raise ConnectionError("the wiki server is down")
        yield from pages("wiki/report", ["group:hr"], ["group:hr", "group:ceo"])


def test_a_failed_paged_source_is_hidden_then_read_again_with_its_pages_readers(tmp_path):
    store, down = tmp_path / "store", tmp_path / "down"
    loader = PagedWiki(str(down))
    run([loader], store, AccessPolicy(default="public"))
    before = chunk_readers(store, "wiki/report")
    assert ["group:hr"] in [a for *_pages, a, _p in before]
    down.touch()
    run([loader], store, AccessPolicy(default="public"))
    assert readers_of(store, "wiki/report") == {(NO_READER,)}  # no page list is known now
    down.unlink()
    run([loader], store, AccessPolicy(default="public"))
    assert chunk_readers(store, "wiki/report") == before


def test_the_run_log_records_permission_changes(tmp_path):
    root = tmp_path / "data"
    write(root, "hr/pay.md", "Salaries are paid on the fifth of each month")
    store = tmp_path / "store"
    run(root, store, rules(hr=["hr"]))
    run(root, store, rules(hr=["ceo"]))
    lines = [json.loads(x) for x in (store / "ragingest_runs.jsonl").read_text().splitlines()]
    assert [line["access_changed"] for line in lines] == [0, 1]
    assert lines[1]["access_changed_sources"] == ["hr/pay.md"]
    assert lines[1]["access_policy"] == "set in Python"
    assert stored(store)  # the store is whole
