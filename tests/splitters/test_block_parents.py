"""Pieces of a table cut by rows get bounded parents: the whole table only when it fits the
parent size, else runs of consecutive pieces that fit (a huge table must not hand every
row-piece the whole table as its parent)."""

from __future__ import annotations

from ragingest.splitters.blocks import piece_parents
from ragingest.splitters.factory import SplitSettings, base_splitter
from ragingest.splitters.measure import Measure
from ragingest.splitters.structure import analyze

HEADER = "| a | b |\n|---|---|\n"  # 20 chars, then rows of 12 chars each
TABLE = HEADER + "".join(f"| r{i} | v{i} |\n" for i in range(6))
PIECES = [(0, 31), (32, 55), (56, 79), (80, 91)]  # header + r0 | r1 r2 | r3 r4 | r5


def test_piece_parents_are_the_block_when_it_fits_else_runs_that_fit():
    counter, block = Measure("chars").index(TABLE), analyze(TABLE).blocks[0]
    assert [TABLE[a:b] for a, b in PIECES][1] == "| r1 | v1 |\n| r2 | v2 |"
    assert piece_parents(TABLE, block, PIECES, counter, 1000) == [(0, 91)] * 4
    assert piece_parents(TABLE, block, PIECES, counter, 50) == [
        (0, 31),
        (32, 79),
        (32, 79),
        (80, 91),
    ]


def test_a_table_over_the_model_limit_keeps_parents_within_the_parent_size(e5_info):
    rows = "".join(f"| Позиция {i} | Описание товара {i} |\n" for i in range(3000))
    text = "# Каталог\n\n| Позиция | Описание |\n|---|---|\n" + rows
    splitter = base_splitter(SplitSettings(), info=e5_info)
    chunks = splitter.split_chunks(text)
    count = splitter.measure.index(text).count
    parents = sorted({c.parent_span for c in chunks})
    assert max(count(*p) for p in parents) <= splitter.parent_chunk_size == 1000
    assert all(a <= c.start_index and c.end_index <= b for c in chunks for a, b in [c.parent_span])
    # consecutive runs: each parent starts where a chunk starts and ends where one ends
    assert {a for a, _ in parents} <= {c.start_index for c in chunks}
    assert {b for _, b in parents} <= {c.end_index for c in chunks}
    assert (len(chunks), len(parents)) == (93, 47)  # ~480-token row pieces, two a parent
