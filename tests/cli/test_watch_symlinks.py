"""``watch`` with --follow-symlinks-outside sees what ``ingest`` sees: a symlink out of the
root is in its snapshot (with its target's size and mtime), so editing the target starts a
run; without the switch the link is not watched (the run skips it too)."""

from __future__ import annotations

import os

import pytest

from ragingest.cli.watch import snapshot, watch
from ragingest.pipeline.options import IngestOptions

pytestmark = pytest.mark.slow

MODEL = "sentence-transformers/all-MiniLM-L6-v2"


@pytest.fixture
def linked(tmp_path):
    outside, corpus = tmp_path / "outside", tmp_path / "docs"
    outside.mkdir()
    corpus.mkdir()
    target = outside / "target.md"
    target.write_text("# Цель\n\nФайл вне корня.\n", "utf-8")
    (corpus / "link.md").symlink_to(target)
    (corpus / "note.md").write_text("# Заметка\n\nФайл в корне.\n", "utf-8")
    return corpus, target


def test_the_snapshot_follows_outside_links_only_when_told(linked):
    corpus, target = linked
    info = target.stat()
    assert sorted(snapshot([corpus])) == [str(corpus / "note.md")]
    followed = snapshot([corpus], follow_outside=True)
    assert sorted(followed) == [str(corpus / "link.md"), str(corpus / "note.md")]
    assert followed[str(corpus / "link.md")] == (info.st_size, info.st_mtime_ns)


def test_an_edit_of_an_outside_target_starts_a_run(linked, tmp_path):
    corpus, target = linked
    options = IngestOptions(tmp_path / "db", "kbase", model=MODEL, follow_symlinks_outside=True)
    sleeps, reports = [], []

    def sleep(_seconds: float) -> None:
        sleeps.append(_seconds)
        if len(sleeps) > 2:
            raise RuntimeError("the edit of the link's target was not seen")
        target.write_text("# Цель\n\nФайл вне корня, исправлен.\n", "utf-8")
        os.utime(target, ns=(10**18, 10**18 + len(sleeps)))

    assert watch([corpus], options, 1.0, max_runs=2, on_report=reports.append, sleep=sleep) == 0
    assert len(sleeps) == 1
    runs = [{f.path: f.status for f in report.files} for report in reports]
    assert runs == [{"link.md": "ok", "note.md": "ok"}, {"link.md": "ok", "note.md": "unchanged"}]
