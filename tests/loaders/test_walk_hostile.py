"""The walk reads only regular files inside the ingested roots: FIFOs, devices, symlinks out
of the roots, loops and broken links are skipped with a reason, decided before any open;
names that are not UTF-8 come out escaped, and the report writer takes them."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ragingest.loaders import loader_for
from ragingest.loaders.inputs.walk import FoundFile, SkippedFile, walk, walk_entries
from ragingest.pipeline.report import FileResult, RunReport

BAD_NAME = os.fsdecode(b"bad\xff\xfe.md")  # not UTF-8: surrogate-escaped by os


def tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# Секрет\n\nВне корня.\n", "utf-8")
    (root / "a.md").write_text("# A\n\nТекст.\n", "utf-8")
    (root / "sub" / "b.md").write_text("# B\n\nТекст.\n", "utf-8")
    os.mkfifo(root / "fifo.txt")
    os.symlink("/dev/zero", root / "zero.txt")
    os.symlink(outside / "secret.md", root / "passwd.md")
    os.symlink(outside, root / "linked_out")
    os.symlink("sub", root / "linked_in")
    os.symlink("a.md", root / "alias.md")
    os.symlink("loop2.md", root / "loop1.md")
    os.symlink("loop1.md", root / "loop2.md")
    os.symlink("gone.md", root / "dangling.md")
    (root / BAD_NAME).write_text("# Имя\n\nНе UTF-8 имя файла.\n", "utf-8")
    return root


def entries(root: Path, **kwargs) -> dict[str, tuple[str, str]]:
    return {
        e.source: ("found", "") if isinstance(e, FoundFile) else (e.kind, e.reason)
        for e in walk_entries([root], **kwargs)
    }


def test_only_regular_files_inside_the_root_are_found(tmp_path):
    root = tree(tmp_path)
    outside = tmp_path / "outside"
    assert entries(root) == {
        "a.md": ("found", ""),
        "alias.md": ("found", ""),  # a symlink inside the root is followed
        "bad\\xff\\xfe.md": ("found", ""),
        "dangling.md": ("dangling_symlink", "a broken symlink (No such file or directory)"),
        "fifo.txt": ("not_regular", "a FIFO (named pipe), not a regular file"),
        "linked_in": (
            "symlink_folder",
            f"a symlink to the folder {root}/sub, walked where it lies",
        ),
        "linked_out": (
            "outside_root",
            f"a symlink to {outside}, outside the ingested folders (--follow-symlinks-outside "
            "follows it)",
        ),
        "loop1.md": ("symlink_loop", "a symlink loop (Too many levels of symbolic links)"),
        "loop2.md": ("symlink_loop", "a symlink loop (Too many levels of symbolic links)"),
        "passwd.md": (
            "outside_root",
            f"a symlink to {outside}/secret.md, outside the ingested folders "
            "(--follow-symlinks-outside follows it)",
        ),
        "sub/b.md": ("found", ""),
        "zero.txt": (
            "not_regular",
            "a symlink to /dev/zero, a character device, not a regular file",
        ),
    }


def test_follow_outside_takes_outside_files_and_folders_never_devices(tmp_path):
    root = tree(tmp_path)
    found = entries(root, follow_outside=True)
    assert found["passwd.md"] == ("found", "")
    assert found["linked_out/secret.md"] == ("found", "")
    assert found["zero.txt"][0] == "not_regular"
    assert found["fifo.txt"][0] == "not_regular"


def test_walk_hands_skipped_entries_to_the_caller(tmp_path):
    root = tree(tmp_path)
    skipped: list[SkippedFile] = []
    files = [f.source for f in walk([root], include=["*.md"], skipped=skipped)]
    assert files == ["a.md", "alias.md", "bad\\xff\\xfe.md", "sub/b.md"]
    assert sorted(s.source for s in skipped) == [
        "dangling.md", "linked_in", "linked_out", "loop1.md", "loop2.md", "passwd.md",
    ]  # fmt: skip


def test_a_name_that_is_not_utf8_is_loaded_and_reported_escaped(tmp_path):
    root = tree(tmp_path)
    documents = list(loader_for(root / BAD_NAME, root).lazy_load())
    assert documents[0].metadata["source"] == "bad\\xff\\xfe.md"
    assert documents[0].metadata["title"] == "bad\\xff\\xfe"
    report = RunReport(files=[FileResult(BAD_NAME, "failed", error=f"{BAD_NAME}: broken")])
    report.write(tmp_path / "report.json")
    data = json.loads((tmp_path / "report.json").read_text("utf-8"))
    assert data["files"][0]["path"] == "bad\\xff\\xfe.md"
    assert data["files"][0]["error"] == "bad\\xff\\xfe.md: broken"
    assert "FAILED bad\\xff\\xfe.md: bad\\xff\\xfe.md: broken" in report.summary()
