"""A loader reads only the file the walk checked: a path swapped after the walk (for a symlink
out of the root, or for another file) is refused by name and nothing of it is read, in this
process, in the parser worker and in the Ray engine's scan and split workers, for every format
(the rich ones reach pandoc only with the bytes read from the checked descriptor)."""

from __future__ import annotations

import os
import pickle
import socket
from pathlib import Path

import pytest

from ragingest.errors import UnreadableFileError
from ragingest.loaders import loader_for
from ragingest.loaders.inputs.walk import FoundFile, walk
from ragingest.loaders.process.bounded import ParserPool
from ragingest.pipeline.plan import make_plan

SECRET = "root password: hunter2-outside"


def found_in(root: Path) -> dict[str, FoundFile]:
    return {found.path.name: found for found in walk([root])}


def swap_for_symlink(path: Path, target: Path) -> None:
    link = path.with_name(path.name + ".swap")
    os.symlink(target, link)
    os.replace(link, path)  # atomic: the path is a symlink from now on


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "shared"
    root.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / "secret.md").write_text(f"# Secret\n\n{SECRET}\n", "utf-8")
    for name in ("n1.md", "n2.csv", "n3.html", "n4.eml", "n5.mbox", "n6.rtf", "n7.json"):
        (root / name).write_text("placeholder text of a note\n", "utf-8")
    (root / "a.md").write_text("# A\n\nТекст внутри.\n", "utf-8")
    os.symlink("a.md", root / "alias.md")  # a symlink inside the root: read through it
    return root


@pytest.mark.parametrize("name", ["n1.md", "n2.csv", "n3.html", "n4.eml", "n5.mbox", "n6.rtf"])
def test_a_path_swapped_for_a_symlink_after_the_walk_is_not_read(tree, name):
    found = found_in(tree)[name]
    swap_for_symlink(found.path, tree.parent / "out" / "secret.md")
    with pytest.raises(UnreadableFileError, match="replaced after the walk") as caught:
        list(loader_for(found.path, tree, identity=found.identity).lazy_load())
    assert caught.value.path == str(found.path)


def test_a_path_swapped_for_another_file_is_not_read(tree):
    found = found_in(tree)["n1.md"]
    other = tree / "other.tmp"
    other.write_text(f"# Other\n\n{SECRET}\n", "utf-8")
    os.replace(other, found.path)  # a regular file again, but not the one the walk checked
    with pytest.raises(UnreadableFileError, match="replaced after the walk"):
        list(loader_for(found.path, tree, identity=found.identity).lazy_load())


def test_the_parser_worker_refuses_the_swap_too(tree):
    found = found_in(tree)["n1.md"]
    swap_for_symlink(found.path, tree.parent / "out" / "secret.md")
    with ParserPool(timeout=60) as pool, pytest.raises(UnreadableFileError, match="replaced"):
        pool.load(found.path, tree, 2**20, None, found.identity)


def test_a_planned_task_reads_only_the_walked_file(tree):
    tasks = {task.path.name: task for task in make_plan([tree], {}).tasks if task.path}
    task = tasks["n1.md"]
    swap_for_symlink(task.path, tree.parent / "out" / "secret.md")
    with pytest.raises(UnreadableFileError, match="replaced after the walk"):
        list(task.load(2**20, None))
    alias = tasks["alias.md"]  # a symlink the walk followed (inside the root) still reads
    assert "Текст внутри." in next(iter(alias.load(2**20, None))).page_content


def test_an_unchanged_file_and_a_symlink_inside_the_root_read_as_before(tree):
    files = found_in(tree)
    for name in ("a.md", "alias.md"):
        documents = list(loader_for(files[name].path, tree, identity=files[name].identity).load())
        assert "Текст внутри." in documents[0].page_content


def test_the_stamp_hashes_only_the_walked_file(tree):
    """The plan's stamp (size, mtime, sha256) is taken on the checked descriptor: a swapped
    path has no stamp (the parse then names the swap), never the hash of the file swapped in."""
    from ragingest.pipeline.plan import stamp_of
    from ragingest.pipeline.stamps import FileStamp

    files = found_in(tree)
    for name in ("a.md", "alias.md"):
        stamp = stamp_of(files[name].path, 2**20, files[name].identity)
        assert stamp == FileStamp.of(tree / "a.md")
    swap_for_symlink(files["n1.md"].path, tree.parent / "out" / "secret.md")
    assert stamp_of(files["n1.md"].path, 2**20, files["n1.md"].identity) is None
    other = tree / "other.tmp"
    other.write_text(f"# Other\n\n{SECRET}\n", "utf-8")
    os.replace(other, files["n2.csv"].path)
    assert stamp_of(files["n2.csv"].path, 2**20, files["n2.csv"].identity) is None


def _ray_batch(tasks) -> dict[str, list[str]]:
    """The columns one Ray Data batch of ``tasks`` carries to a worker."""
    from ragingest.pipeline.engine_ray import task_rows

    rows = task_rows(tasks)
    return {key: [row[key] for row in rows] for key in rows[0]}


@pytest.mark.parametrize("host", [socket.gethostname(), "another-machine"])
def test_the_ray_workers_read_only_the_walked_file(tree, host):
    """The functions the Ray engine maps over its rows, called here as a worker calls them (no
    cluster): the walk's identity travels in the rows; a worker on another machine compares it
    without the device number and still refuses the swap."""
    import numpy as np

    from ragingest.pipeline.options import IngestOptions
    from ragingest.pipeline.ray_tasks import scan_batch, split_batch

    tasks = [t for t in make_plan([tree], {}).tasks if t.path and t.path.name in NAMES]
    tasks.sort(key=lambda t: NAMES.index(t.path.name))
    swap_for_symlink(tasks[0].path, tree.parent / "out" / "secret.md")
    other = tree / "other.tmp"
    other.write_text(f"# Other\n\n{SECRET}\n", "utf-8")
    os.replace(other, tasks[1].path)  # a regular file again, not the one the walk checked
    batch = _ray_batch(tasks)
    options = IngestOptions(persist_dir=tree.parent / "db", collection="kb")
    scanned = scan_batch(batch, options, "read-after-walk", host)
    assert scanned["ok"] == [False, False, True, True]
    out = split_batch(
        batch, options, "sentence-transformers/all-MiniLM-L6-v2", None,
        np.array([], dtype=np.uint64), "read-after-walk", host,
    )  # fmt: skip
    headers = {
        Path(path).name: pickle.loads(blob)
        for path, seq, blob in zip(out["path"], out["seq"], out["blob"], strict=True)
        if seq == -1
    }
    for name in NAMES[:2]:
        error, _ = headers[name]
        assert error[0] is UnreadableFileError and "replaced after the walk" in error[2]
    for name in NAMES[2:]:
        assert headers[name][0] is None
    assert SECRET not in "".join(out["text"])
    assert any("Текст внутри." in text for text in out["text"])


NAMES = ["n1.md", "n2.csv", "a.md", "alias.md"]
