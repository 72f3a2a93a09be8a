"""A loader reads only the file the walk checked: a path swapped after the walk (for a symlink
out of the root, or for another file) is refused by name and nothing of it is read, in this
process and in the parser worker, for every format (the rich ones reach pandoc only with the
bytes read from the checked descriptor)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ragingest.errors import UnreadableFileError
from ragingest.loaders import loader_for
from ragingest.loaders.bounded import ParserPool
from ragingest.loaders.walk import FoundFile, walk
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
