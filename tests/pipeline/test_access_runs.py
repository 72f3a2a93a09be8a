"""Access policies in real runs (real model; Chroma on disk, and the in-memory store too where
a test takes ``store_backend``): every chunk, parent section and file state carries its file's
readers; a change of readers alone is written in place to every copy in the next run with
nothing embedded again; a collection keeps the policy it was made with; a config inside the
data grants nothing."""

from __future__ import annotations

import grp
import os
import pwd
import shutil
import tempfile
from pathlib import Path

import pytest
from langchain_core.documents import Document

import ragingest
from ragingest.cli.main import main
from ragingest.errors import CollectionMismatchError
from ragingest.pipeline.access_policy import AccessPolicy, AccessRule
from ragingest.pipeline.state import FileStates
from ragingest.schema import NO_READER, PUBLIC_PRINCIPAL
from ragingest.vectorstore.backends import open_backend
from ragingest.vectorstore.identity import ACCESS_POLICY_KEY
from ragingest.vectorstore.records.aliases import resolve_collection
from ragingest.vectorstore.records.database import namespace
from ragingest.vectorstore.records.parents import ParentStore
from tests.stored import stored_rows

pytestmark = pytest.mark.slow

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
# three sections, each a chunk at chunk_size=32
PART = "## Part {n}\n\n{body}, in part {n}: every word of it matters to the reader here.\n\n"
TEXT = "# {title}\n\n" + "".join(PART.replace("{n}", n) for n in ("one", "two", "three"))


def write(root: Path, rel: str, body: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(TEXT.format(title=rel, body=body), encoding="utf-8")


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    write(root, "hr/pay.md", "Salaries are paid on the fifth of each month")
    write(root, "pub/handbook.md", "The office opens at nine and closes at six")
    write(root, "misc/notes.md", "The coffee machine is on the second floor")
    return root


def policy(hr: list[str], unix: bool = False) -> AccessPolicy:
    rules = (AccessRule("hr/**", groups=tuple(hr)), AccessRule("pub/**", public=True))
    return AccessPolicy(rules, unix=unix)


def run(
    root: object,
    store: Path,
    access: AccessPolicy | None,
    backend: str = "chroma",
    **kwargs: object,
):
    return ragingest.ingest(
        root, persist_dir=store, collection="kb", model=MINILM, access_policy=access,
        chunk_size=32, backend=backend, **kwargs,
    )  # fmt: skip


def stored(
    store: Path, backend: str = "chroma"
) -> dict[str, list[tuple[list[str], list[str] | None]]]:
    """source → [(chunk's access, its parent's access)] for every chunk."""
    physical = resolve_collection(store, "kb")
    parents = ParentStore(store, physical)
    out: dict[str, list] = {}
    for _text, meta in stored_rows(store, "kb", backend).values():
        parent = parents.mget([meta["parent_id"]])[0]
        assert parent is not None
        out.setdefault(meta["source"], []).append(
            (meta.get("access"), parent.metadata.get("access"))
        )
    return out


def readers_of(store: Path, source: str, backend: str = "chroma") -> set[tuple[str, ...]]:
    """Every distinct access list the chunks and parents of ``source`` hold."""
    pairs = stored(store, backend)[source]
    return {tuple(a) for a, _ in pairs} | {tuple(p) for _, p in pairs if p is not None}


def states(store: Path) -> dict[str, tuple[str, ...] | None]:
    physical = resolve_collection(store, "kb")
    return {k: v.access for k, v in FileStates(store, namespace(physical)).load().items()}


def test_every_copy_carries_its_readers_and_a_change_is_written_in_place(
    corpus, tmp_path, store_backend
):
    store = tmp_path / "store"
    first = run(corpus, store, policy(["hr"]), store_backend)
    assert first.embeddings_computed > 0 and first.failed == 0
    assert readers_of(store, "hr/pay.md", store_backend) == {("group:hr",)}
    assert readers_of(store, "pub/handbook.md", store_backend) == {(PUBLIC_PRINCIPAL,)}
    assert readers_of(store, "misc/notes.md", store_backend) == {(NO_READER,)}  # deny by default
    assert all(
        parent is not None for pairs in stored(store, store_backend).values() for _, parent in pairs
    )
    assert first.unreadable == ["misc/notes.md"] and first.access_changed == []
    assert "1 files readable by no one" in first.summary()
    assert "NO READER misc/notes.md" in first.summary()
    assert states(store)["hr/pay.md"] == ("group:hr",)
    physical = resolve_collection(store, "kb")
    metadata = open_backend(store, kind=store_backend).metadata(physical)
    assert metadata is not None and metadata[ACCESS_POLICY_KEY] is True

    # content unchanged, hr loses the file
    revoked = run(corpus, store, policy(["ceo"]), store_backend)
    assert revoked.access_changed == ["hr/pay.md"]
    assert (revoked.embeddings_computed, revoked.embeddings_cached) == (0, 0)
    assert (revoked.added, revoked.deleted, revoked.changed) == (0, 0, 0)
    assert revoked.unchanged == 3
    # every chunk and parent
    assert readers_of(store, "hr/pay.md", store_backend) == {("group:ceo",)}
    assert readers_of(store, "pub/handbook.md", store_backend) == {(PUBLIC_PRINCIPAL,)}
    assert states(store)["hr/pay.md"] == ("group:ceo",)
    assert "readers changed for 1 files" in revoked.summary()

    again = run(corpus, store, policy(["ceo"]), store_backend)  # nothing changed: nothing written
    assert again.access_changed == [] and again.embeddings_computed == 0

    regranted = run(corpus, store, policy(["hr", "ceo"]), store_backend)
    assert regranted.access_changed == ["hr/pay.md"] and regranted.embeddings_computed == 0
    assert readers_of(store, "hr/pay.md", store_backend) == {("group:ceo", "group:hr")}


def test_readers_and_content_changed_together_reach_the_unchanged_chunks(
    corpus, tmp_path, store_backend
):
    store = tmp_path / "store"
    run(corpus, store, policy(["hr"]), store_backend)
    before = len(stored(store, store_backend)["hr/pay.md"])
    (corpus / "hr/pay.md").write_text(
        TEXT.format(title="hr/pay.md", body="Salaries are paid on the fifth of each month")
        + "\n## Part three\n\nBonuses are paid in December.\n",
        encoding="utf-8",
    )
    report = run(corpus, store, policy(["payroll"]), store_backend)
    assert report.access_changed == ["hr/pay.md"]
    assert before >= 3 and report.skipped >= before  # unchanged chunks kept, not embedded
    assert len(stored(store, store_backend)["hr/pay.md"]) > before
    assert readers_of(store, "hr/pay.md", store_backend) == {("group:payroll",)}


def test_a_collection_keeps_the_policy_it_was_made_with(corpus, tmp_path, store_backend):
    store = tmp_path / "store"
    run(corpus, store, policy(["hr"]), store_backend)
    for rebuild in (False, True):  # never widened, not even by a rebuild
        with pytest.raises(CollectionMismatchError, match=r"--config FILE"):
            run(corpus, store, None, store_backend, rebuild=rebuild)
    assert readers_of(store, "hr/pay.md", store_backend) == {("group:hr",)}

    plain = tmp_path / "plain"
    run(corpus, plain, None, store_backend)
    assert "access" not in str(stored(plain, store_backend))
    with pytest.raises(CollectionMismatchError, match=r"without an access policy.*--rebuild"):
        run(corpus, plain, policy(["hr"]), store_backend)
    rebuilt = run(corpus, plain, policy(["hr"]), store_backend, rebuild=True)
    assert rebuilt.rebuilt and rebuilt.embeddings_computed == 0  # from the embedding cache
    assert readers_of(plain, "hr/pay.md", store_backend) == {("group:hr",)}
    assert readers_of(plain, "misc/notes.md", store_backend) == {(NO_READER,)}


def test_a_config_inside_the_data_cannot_grant_access(corpus, tmp_path, store_backend):
    (corpus / ".ragingest.toml").write_text(
        '[access_policy]\ndefault = "public"\n\n[[access]]\nmatch = "**"\npublic = true\n',
        encoding="utf-8",
    )
    notes = corpus / "misc/notes.md"  # nor can a file's own front matter
    notes.write_text('---\naccess: ["*"]\n---\n' + notes.read_text("utf-8"), "utf-8")
    store = tmp_path / "store"
    report = run(corpus, store, policy(["hr"]), store_backend)
    assert readers_of(store, "misc/notes.md", store_backend) == {(NO_READER,)}
    assert readers_of(store, "hr/pay.md", store_backend) == {("group:hr",)}
    got = stored_rows(store, "kb", store_backend, where={"source": "misc/notes.md"})
    assert got and all(m["fm_access"] == ["*"] for _, m in got.values())  # kept as data, renamed
    assert any("REFUSED its access rules" in note for note in report.notes)
    assert "REFUSED its access rules" in report.summary()


def test_documents_name_their_readers(tmp_path):
    store = tmp_path / "store"
    docs = [
        Document(
            "# Q3 plan\n\nThe plan for the third quarter.",
            metadata={"source": "wiki/q3", "access": ["user:bob", "group:sales", "user:bob"]},
        ),
        Document("# Lunch\n\nLunch is at noon.", metadata={"source": "wiki/lunch"}),
        Document("# Bad\n\nA bad list.", metadata={"source": "wiki/bad", "access": "sales"}),
    ]
    report = run(docs, store, AccessPolicy(default="public"))
    assert readers_of(store, "wiki/q3") == {("group:sales", "user:bob")}
    assert readers_of(store, "wiki/lunch") == {(PUBLIC_PRINCIPAL,)}  # the policy's default
    assert "wiki/bad" not in stored(store)
    failed = [f for f in report.files if f.status == "failed"]
    assert len(failed) == 1 and "wiki/bad" in failed[0].error and "'sales'" in failed[0].error

    docs[0] = Document(docs[0].page_content, metadata={"source": "wiki/q3", "access": []})
    again = run(docs[:2], store, AccessPolicy(default="public"))
    assert again.access_changed == ["doc:wiki/q3"] and again.embeddings_computed == 0
    assert readers_of(store, "wiki/q3") == {(NO_READER,)}  # an empty list: nobody


def test_documents_naming_readers_without_a_policy_are_refused(tmp_path):
    docs = [Document("# Q3\n\nPlan.", metadata={"source": "q3", "access": ["group:sales"]})]
    report = run(docs, tmp_path / "store", None)
    assert report.failed == 1 and "no access policy" in report.files[0].error


def test_posix_permissions_add_readers_and_a_chmod_is_written_in_place(tmp_path):
    shared = Path(tempfile.mkdtemp(prefix="ragingest-share-"))  # pytest's folders are 0700
    try:
        os.chmod(shared, 0o755)  # a share the group may enter, as the OS checks it
        write(shared, "misc/notes.md", "The coffee machine is on the second floor")
        os.chmod(shared / "misc", 0o750)  # others may not enter
        notes = shared / "misc/notes.md"
        os.chmod(notes, 0o644)  # world-readable, but only in a folder the group may enter
        owner = f"unix:user:{pwd.getpwuid(notes.stat().st_uid).pw_name}"
        group = f"unix:group:{grp.getgrgid(notes.stat().st_gid).gr_name}"
        store = tmp_path / "store"
        run(shared, store, policy(["hr"], unix=True))
        assert readers_of(store, "misc/notes.md") == {tuple(sorted([group, owner]))}
        os.chmod(notes, 0o600)  # the group may no longer read it; the bytes and mtime stay
        report = run(shared, store, policy(["hr"], unix=True))
        assert report.access_changed == ["misc/notes.md"] and report.embeddings_computed == 0
        assert readers_of(store, "misc/notes.md") == {(owner,)}
    finally:
        shutil.rmtree(shared, ignore_errors=True)


def test_the_command_line_reads_the_policy_from_the_operators_config(corpus, tmp_path, capsys):
    ops = tmp_path / "ops.toml"
    ops.write_text('[[access]]\nmatch = "hr/**"\ngroups = ["hr"]\n', encoding="utf-8")
    store = tmp_path / "store"
    args = ["ingest", str(corpus), "--persist-dir", str(store), "--collection", "kb",
            "--model", MINILM, "--chunk-size", "32", "--no-progress"]  # fmt: skip
    assert main([*args, "--config", str(ops)]) == 0
    out = capsys.readouterr().out
    assert f"access policy in force ({ops})" in out and "2 files readable by no one" in out
    assert readers_of(store, "hr/pay.md") == {("group:hr",)}
    assert readers_of(store, "pub/handbook.md") == {(NO_READER,)}
    assert main(args) == 2  # the same collection without the config: refused
    assert "--config FILE" in capsys.readouterr().err


def test_a_revocation_reaches_the_kept_chunks_of_a_file_that_failed(
    corpus, tmp_path, store_backend
):
    store = tmp_path / "store"
    run(corpus, store, policy(["hr"]), store_backend)
    with (corpus / "hr/pay.md").open("a", encoding="utf-8") as handle:
        handle.write("More words. " * 400)  # now over the size bound: it fails, chunks stay
    report = run(corpus, store, policy(["ceo"]), store_backend, max_file_bytes=2000)
    assert [f.path for f in report.files if f.status == "failed"] == ["hr/pay.md"]
    assert report.access_changed == ["hr/pay.md"]
    assert readers_of(store, "hr/pay.md", store_backend) == {("group:ceo",)}
    assert states(store)["hr/pay.md"] == ("group:ceo",)


def test_the_ray_workers_give_each_chunk_its_files_readers(corpus, tmp_path):
    """The rows the Ray engine sends its split workers carry each file's readers (called here
    as a worker calls them, no cluster)."""
    import pickle
    from dataclasses import replace

    import numpy as np

    from ragingest.pipeline.engine_ray import task_rows
    from ragingest.pipeline.options import IngestOptions
    from ragingest.pipeline.plan import make_plan
    from ragingest.pipeline.ray_tasks import split_batch

    tasks = sorted(make_plan([corpus], {}).tasks, key=lambda t: t.source)
    tasks[0] = replace(tasks[0], access=("group:hr", "user:ann"))  # hr/pay.md
    rows = task_rows(tasks)
    batch = {key: [row[key] for row in rows] for key in rows[0]}
    options = IngestOptions(tmp_path / "db", "kb", access_policy=AccessPolicy())
    out = split_batch(batch, options, MINILM, None, np.array([], dtype=np.uint64))
    found: dict[str, set] = {}
    for seq, blob in zip(out["seq"], out["blob"], strict=True):
        if seq >= 0:
            record = pickle.loads(blob)
            found.setdefault(record.source, set()).add(str(record.metadata.get("access")))
    assert found["hr/pay.md"] == {"['group:hr', 'user:ann']"}
    assert found["misc/notes.md"] == {"None"}  # no readers given: no key (no policy)
