"""Tables and fenced code over the model's input limit: the one exception to "never cut".

A table cut in half is useless, so the splitters keep a table whole even over the chunk size
(such a chunk is flagged ``oversized``). But the model reads at most ``max_seq_length``
tokens: a block beyond that would be embedded truncated and its tail could never be found.
So a block whose embedded text is over the limit is cut at line boundaries (table rows, code
lines; finer only for a single over-long line), every piece after the first embeds the table's
header rows again (the stored text stays an exact slice), and every piece's parent is the whole
block, so parent expansion still returns the table as one.
"""

from __future__ import annotations

from dataclasses import replace

from ragingest.splitters.counters import SpanCounter
from ragingest.splitters.packing import pack
from ragingest.splitters.structure import Block, Structure, is_table_rule


def block_of(structure: Structure, start: int, end: int) -> Block | None:
    """The atomic block holding the span ``[start, end)`` whole, if any."""
    return structure.block_holding(start, end)


def block_span(text: str, block: Block | None, span: tuple[int, int]) -> tuple[int, int]:
    """The parent of a piece of ``block``: the whole block without its trailing newline."""
    if block is None:
        return span
    return block.start, block.start + len(text[block.start : block.end].rstrip())


def piece_parents(
    text: str,
    block: Block | None,
    spans: list[tuple[int, int]],
    counter: SpanCounter,
    budget: int,
) -> list[tuple[int, int]]:
    """The parent of each piece of a cut block: the whole block if it fits in ``budget``,
    else consecutive pieces grouped, in order, into runs that fit, each run's span (a
    100 000-row table must not hand every row-piece the whole table)."""
    whole = block_span(text, block, (spans[0][0], spans[-1][1]))
    if counter.count(*whole) <= budget:
        return [whole] * len(spans)
    parents: list[tuple[int, int]] = []
    run_start = spans[0][0]
    run: list[tuple[int, int]] = []
    for s, e in spans:
        if run and counter.count(run_start, e) > budget:
            parents.extend([(run_start, run[-1][1])] * len(run))
            run, run_start = [], s
        run.append((s, e))
    parents.extend([(run_start, run[-1][1])] * len(run))
    return parents


def table_header(text: str, block: Block) -> str:
    """The header row and rule line of a Markdown table (empty for code or rule-less tables)."""
    if block.kind != "table":
        return ""
    lines = text[block.start : block.end].split("\n", 2)
    if len(lines) < 3 or not is_table_rule(lines[1]):
        return ""
    return f"{lines[0].strip()}\n{lines[1].strip()}"


def cut_block(
    text: str, start: int, end: int, budget: int, counter: SpanCounter, structure: Structure
) -> list[tuple[int, int]]:
    """Pieces of at most ``budget`` units of ``[start, end)``, an atomic block's span, cut at
    its lines as if it were prose (no overlap)."""
    return pack(text, start, end, budget, 0, counter, replace(structure, blocks=[]))


def with_header(embed_text: str, body: str, header: str) -> str:
    """``embed_text`` (lead + ``body``) with ``header`` put before ``body``."""
    if not header or body.startswith(header.split("\n", 1)[0]):
        return embed_text
    lead = embed_text[: len(embed_text) - len(body)]
    return f"{lead}{header}\n{body}"
