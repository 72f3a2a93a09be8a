"""The plan stage alone (no model): statuses in walk order, the skip rule, the scan."""

from __future__ import annotations

import dataclasses
import os

from langchain_core.documents import Document

from ragingest.loaders.cleaning.rules import CleaningRules
from ragingest.pipeline.plan import FileTask, is_unchanged, make_plan, scan_corpus, stamp_of
from ragingest.pipeline.state import FileState

NOTICE = "Этот абзац повторяется в каждом документе фонда и должен уйти как шаблон."


def corpus(tmp_path):
    (tmp_path / "a.md").write_text(f"{NOTICE}\n\n# A\n\nПравило А.\n", encoding="utf-8")
    (tmp_path / "b.md").write_text(f"{NOTICE}\n\n# B\n\nПравило Б.\n", encoding="utf-8")
    (tmp_path / "c.bin").write_bytes(b"\x00\x01")
    (tmp_path / "big.md").write_text("x" * 4000, encoding="utf-8")
    return tmp_path


def test_plan_statuses_in_walk_order(tmp_path):
    root = corpus(tmp_path)
    known = {"a.md": FileState(stamp_of(root / "a.md", 1 << 20), chunks=3)}
    plan = make_plan([root], known, max_file_bytes=1000)
    assert [(i.source, i.status) for i in plan.items] == [
        ("a.md", "unchanged"),
        ("b.md", "parse"),
        ("big.md", "parse"),  # too large: parsed, so the split names the reason
        ("c.bin", "unsupported"),
    ]
    assert plan.items[0].state == known["a.md"]
    assert [t.source for t in plan.tasks] == ["b.md", "big.md"]
    assert plan.tasks[1].stamp is None
    assert "no loader for .bin" in plan.items[3].unsupported.reason


def test_the_skip_rule(tmp_path):
    root = corpus(tmp_path)
    stamp = stamp_of(root / "a.md", 1 << 20)
    state = FileState(stamp, chunks=1)
    assert is_unchanged(stamp, state)
    assert not is_unchanged(None, state) and not is_unchanged(stamp, None)
    assert not is_unchanged(stamp, dataclasses.replace(state, version="0.0.0+old"))
    os.utime(root / "a.md", ns=(1, 1))  # same bytes, another mtime
    assert not is_unchanged(stamp_of(root / "a.md", 1 << 20), state)


def test_scan_counts_files_and_given_documents(tmp_path):
    root = corpus(tmp_path)
    given = FileTask("web/page", documents=(Document(page_content=f"{NOTICE}\n\n# P\n"),))
    tasks = [t for t in make_plan([root], {}).tasks if t.source.endswith(".md")] + [given]
    corpus_cleaner = scan_corpus(tasks, CleaningRules())
    assert corpus_cleaner is not None and corpus_cleaner.files == 4
    assert len(corpus_cleaner.boilerplate) == 1  # the notice, in 3 of 4
    assert scan_corpus(tasks, CleaningRules.parse(["boilerplate"])) is None
