"""A document of many headings splits in time linear in its headings, and splitting is under
the per-file time bound.

Linear, structurally: joining bodiless sections looks at each heading a bounded number of
times (it looked at every heading for every section: quadratic), and the structure's range
queries (headings and blocks in a span) are binary searches that give what a scan gives.
Timings are in bench/linear.py (family ``headings``), never here. Bound: a split past
``Splitting.split_timeout`` raises ``FileTimeoutError`` naming the file; the run reports it
``timeout`` and goes on (``tests/cli/test_split_bound.py``)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragingest.errors import FileTimeoutError
from ragingest.pipeline.plan import FileTask
from ragingest.pipeline.split import Splitting, split_task
from ragingest.splitters import HeadingFirstSplitter, deadline
from ragingest.splitters.factory import SplitSettings
from ragingest.splitters.pieces import attach_bodiless, sections_of
from ragingest.splitters.structure import Heading, analyze


def many_headings(count: int) -> str:
    return "\n".join(
        f"{'#' * (1 + i % 3)} Раздел {i}\n\nТекст раздела {i}.\n" for i in range(count)
    )


class CountingHeadings(list[Heading]):
    """The headings, counting each one read (by index or by iteration)."""

    reads = 0

    def __getitem__(self, index):  # type: ignore[override]
        item = super().__getitem__(index)
        self.reads += len(item) if isinstance(index, slice) else 1
        return item

    def __iter__(self) -> Iterator[Heading]:
        for item in super().__iter__():
            self.reads += 1
            yield item


@pytest.mark.parametrize("count", [500, 2000])
def test_joining_bodiless_sections_reads_each_heading_a_bounded_number_of_times(count):
    text = many_headings(count)
    structure = analyze(text)
    headings = CountingHeadings(structure.headings)
    sections = list(sections_of(text, structure.headings))
    attach_bodiless(text, sections, headings)
    assert headings.reads <= 4 * count  # a scan per section read count**2 / 2


def spans_by_scan(structure, start, end):
    return (
        [h for h in structure.headings if h.end > start and h.start < end],
        [h for h in structure.headings if start <= h.start < end],
        [b for b in structure.blocks if b.start < end and b.end > start],
        next((b for b in structure.blocks if b.start <= start and end <= b.end + 1), None),
        next((b for b in structure.blocks if b.start <= start and end <= b.end), None),
    )


def test_range_queries_give_what_a_scan_gives():
    rng = random.Random(7)
    parts = []
    for i in range(300):
        kind = rng.choice(["heading", "para", "table", "code"])
        if kind == "heading":
            parts.append("#" * rng.randint(1, 4) + f" H{i}")
        elif kind == "table":
            parts.append("| a | b |\n|---|---|\n" + "| x | y |\n" * rng.randint(1, 5))
        elif kind == "code":
            parts.append("```\ncode line\n```")
        else:
            parts.append("Текст абзаца. " * rng.randint(1, 8))
    text = "\n\n".join(parts)
    structure = analyze(text)
    assert structure.headings and structure.blocks
    for _ in range(3000):
        start = rng.randrange(len(text))
        end = rng.randrange(start, len(text) + 1)
        found = (
            structure.headings_in(start, end),
            structure.headings_starting_in(start, end),
            structure.blocks_in(start, end),
            structure.block_holding(start, end, slack=1),
            structure.block_holding(start, end),
        )
        assert found == spans_by_scan(structure, start, end), (start, end)


def test_check_raises_past_the_bound_and_nothing_outside_it():
    deadline.check()  # no bound: nothing
    with (
        deadline.within(1e-9),
        pytest.raises(deadline.SplitTimeout, match="longer than 1e-09 s"),
    ):
        deadline.check()
    deadline.check()
    with deadline.within(3600):
        deadline.check()


def test_a_split_past_the_file_timeout_raises_a_timeout_naming_the_file(tmp_path: Path):
    path = tmp_path / "many.md"
    path.write_text(many_headings(3000), "utf-8")
    splitter = HeadingFirstSplitter(chunk_size=200, unit="chars")
    bounded = Splitting(SplitSettings(unit="chars"), lambda: splitter, split_timeout=1e-9)
    with pytest.raises(FileTimeoutError, match=r"splitting took longer than .* \(--file-timeout\)"):
        split_task(FileTask("many.md", path, tmp_path), bounded)
    unbounded = Splitting(SplitSettings(unit="chars"), lambda: splitter, split_timeout=0)
    assert len(split_task(FileTask("many.md", path, tmp_path), unbounded)) > 100
