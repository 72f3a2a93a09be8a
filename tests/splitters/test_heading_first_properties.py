"""Property tests of the heading-first contracts on generated Markdown (hypothesis)."""

from __future__ import annotations

import itertools
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragingest.splitters import HeadingFirstSplitter
from ragingest.splitters.structure import analyze

WORDS = (
    "правило исключение срок выдачи альбом книга читатель заявка продление фонд "
    "rule exception loan period album reader request 14 3 т. е. г. ст. 2024"
).split()

word = st.sampled_from(WORDS)
sentence = st.lists(word, min_size=1, max_size=25).map(lambda ws: " ".join(ws).capitalize() + ".")
paragraph = st.lists(sentence, min_size=1, max_size=12).map(" ".join)
heading = st.tuples(st.integers(1, 4), st.lists(word, min_size=1, max_size=4)).map(
    lambda t: "#" * t[0] + " " + " ".join(t[1]).capitalize()
)
table = st.lists(st.lists(word, min_size=2, max_size=2), min_size=1, max_size=12).map(
    lambda rows: "\n".join(["| a | b |", "|---|---|", *(f"| {r[0]} | {r[1]} |" for r in rows)])
)
code = st.lists(word, min_size=1, max_size=40).map(lambda ws: "```\n" + " ".join(ws) + "\n```")
listing = st.lists(sentence, min_size=1, max_size=6).map(
    lambda items: "\n".join(f"- {i}" for i in items)
)
block = st.one_of(paragraph, paragraph, heading, heading, table, code, listing)
markdown = st.lists(block, min_size=1, max_size=30).flatmap(
    lambda blocks: st.lists(
        st.sampled_from(["\n", "\n\n", "\n\n\n"]), min_size=len(blocks), max_size=len(blocks)
    ).map(lambda seps: "".join(b + s for b, s in zip(blocks, seps, strict=True)))
)
with_table_or_code = st.tuples(markdown, st.one_of(table, code), markdown).map(
    lambda parts: f"{parts[0]}\n\n{parts[1]}\n\n{parts[2]}"
)
sizes = st.sampled_from([(24, 0, 0), (40, 6, 10), (80, 12, 20), (200, 30, 100)])

LIMIT = 72  # a small model limit, so the limit is really exercised


def _splitter(e5_info, size, overlap, minimum):
    return HeadingFirstSplitter(
        size, overlap, minimum, tokenizer=e5_info.tokenizer, max_embed_tokens=LIMIT
    )


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(text=markdown, size=sizes)
def test_contracts_hold_on_generated_markdown(e5_info, text, size):
    splitter = _splitter(e5_info, *size)
    chunks = splitter.split_chunks(text)
    structure = analyze(text)
    covered = bytearray(len(text))
    for chunk in chunks:
        # offsets exact, no edge whitespace
        assert text[chunk.start_index : chunk.end_index] == chunk.text
        assert chunk.text == chunk.text.strip() and chunk.text
        covered[chunk.start_index : chunk.end_index] = b"\x01" * len(chunk.text)
    # every non-whitespace character is in some chunk
    for i, char in enumerate(text):
        if not char.isspace():
            assert covered[i], f"character {i} {char!r} is in no chunk"
    # every embedded text within the model's limit, tables and code included (cut by lines)
    counts = splitter.token_measure.exact([c.embed_text for c in chunks])
    assert max(counts) <= LIMIT
    # overlap only between pieces of one section, never across a heading
    heading_starts = [h.start for h in structure.headings]
    for left, right in itertools.pairwise(chunks):
        assert left.start_index < right.start_index
        if right.start_index < left.end_index:
            assert not any(right.start_index <= h < left.end_index for h in heading_starts)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(text=with_table_or_code)
def test_tables_and_code_are_cut_only_over_the_model_limit(e5_info, text):
    chunks = _splitter(e5_info, 24, 4, 0).split_chunks(text)
    blocks = [b for b in analyze(text).blocks if text[b.start : b.end].lstrip()[:1] in "|`"]
    assert blocks  # every example has a table or a code block to check
    for block in blocks:
        body = text[block.start : block.end].strip()
        holders = [
            c
            for c in chunks
            if c.start_index
            <= block.start
            + (len(text[block.start : block.end]) - len(text[block.start : block.end].lstrip()))
            and c.end_index >= block.start + len(text[block.start : block.end].rstrip())
        ]
        if holders:
            continue
        # cut only when the whole block would not fit the model: then by lines, the block
        # itself being every piece's parent
        start = text.index(body, block.start)
        pieces = [c for c in chunks if start <= c.start_index < start + len(body)]
        assert {c.parent for c in pieces} == {(start, start + len(body))}, body[:30]
        lead = pieces[0].embed_text[: len(pieces[0].embed_text) - len(pieces[0].text)]
        assert _tokens(e5_info, lead + body) > LIMIT, f"block {body[:30]!r} is cut"


# found by the test above (1 seed in ~25): with overlap, a chunk over the model's limit is cut
# again, and its parts reached inside its neighbours (one of them started before the chunk
# ahead of it)
NESTED = (
    "# Правило\n" + "Правило.\n" * 4 + "## Правило\n" + "Правило.\n" * 2
    + "#### Правило правило исключение\n"
    + "Правило. " * 5 + "Правило" + " правило" * 9 + ". " + "Правило" + " правило" * 7 + " т.. "
    + "Правило" + " правило" * 14 + " исключение" * 3 + ". " + "Правило. " * 3 + "Правило.\n"
)


def test_a_chunk_cut_again_leaves_no_part_inside_a_neighbour(e5_info):
    chunks = _splitter(e5_info, 200, 30, 100).split_chunks(NESTED)
    assert [(c.start_index, c.end_index) for c in chunks] == [(0, 232), (233, 463), (455, 490)]
    for chunk in chunks:
        assert NESTED[chunk.start_index : chunk.end_index] == chunk.text


def test_a_heading_glued_to_a_code_block_never_cuts_the_block(e5_info):
    """At 20 tokens the heading with the block fits the budget up to the fence, not up to the
    next cut after it: the block stays whole (it is under the model limit) and the heading
    line stays a piece of its own."""
    text = (
        "# Заявка\n```\nст. исключение правило заявка 2024 reader request album\n```\n\n"
        "2024 т. Loan правило. Album т. Loan. Правило ст. period г. Request. Ст. reader. "
        "Правило request 14 г.\n"
    )
    block = (text.index("```"), text.rindex("```") + 3)
    chunks = _splitter(e5_info, 20, 4, 0).split_chunks(text)
    assert [(c.start_index, c.end_index) for c in chunks] == [(0, 8), block, (74, 110), (111, 175)]


def test_a_table_over_the_model_limit_is_cut_by_rows(e5_info):
    """The cut branch of the property above, on a table that surely exceeds the limit."""
    rows = [f"| правило {i} | срок выдачи {i} дней |" for i in range(30)]
    table = "\n".join(["| Правило | Срок |", "|---|---|", *rows])
    text = f"# Фонд\n\n{table}\n"
    start = text.index(table)
    chunks = _splitter(e5_info, 24, 4, 0).split_chunks(text)
    pieces = [c for c in chunks if c.start_index >= start]
    assert len(pieces) > 1
    assert {c.parent for c in pieces} == {(start, start + len(table))}
    assert (
        "".join(text[c.start_index : c.end_index] + "\n" for c in pieces).count("| правило") == 30
    )
    for piece in pieces:
        assert piece.text.startswith("| ") and piece.text.endswith(" |")
        assert _tokens(e5_info, piece.embed_text) <= LIMIT
    assert pieces[1].embed_text.count("| Правило | Срок |\n|---|---|\n") == 1  # header kept
    assert _tokens(e5_info, "Фонд\n" + table) > LIMIT


def _tokens(e5_info, text: str) -> int:
    return len(e5_info.tokenizer(text, add_special_tokens=False)["input_ids"])


def test_min_chunk_size_zero_keeps_every_section_apart(e5_info):
    text = "# T\n\n## A\none.\n\n## B\ntwo.\n\n### C\nthree.\n"
    chunks = HeadingFirstSplitter(200, 0, 0, tokenizer=e5_info.tokenizer).split_chunks(text)
    # the bare title goes with the first section under it, as MarkdownHeaderTextSplitter does
    assert [c.text for c in chunks] == ["# T\n\n## A\none.", "## B\ntwo.", "### C\nthree."]
    assert [c.section_path for c in chunks] == ["T > A", "T > B", "T > B > C"]
    assert chunks[2].embed_text == "T > B\n### C\nthree."


def test_small_sections_merge_into_one_chunk(e5_info):
    text = "# T\n\n## A\none.\n\n## B\ntwo.\n\n### C\nthree.\n"
    chunks = HeadingFirstSplitter(200, 0, 100, tokenizer=e5_info.tokenizer).split_chunks(text)
    assert [(c.start_index, c.end_index) for c in chunks] == [(0, len(text) - 1)]


def test_long_section_is_cut_with_heading_breadcrumb_and_overlap(e5_info):
    body = " ".join(f"Предложение номер {i} о сроке выдачи." for i in range(120))
    text = f"# Регламент\n\n## Выдача\n{body}\n\n## Продление\nКороткий раздел.\n"
    chunks = HeadingFirstSplitter(120, 20, 0, tokenizer=e5_info.tokenizer).split_chunks(text)
    pieces = [c for c in chunks if c.headings and c.headings[-1][1] == "Выдача"]
    assert len(pieces) > 3
    assert pieces[0].text.startswith("# Регламент\n\n## Выдача\n")  # the bare title with it
    for piece in pieces[1:]:
        assert piece.embed_text.startswith("Регламент > Выдача\n")
        assert piece.strategy == "recursive"
        assert re.match(r"Предложение номер \d+", piece.text)  # starts on a sentence
    overlaps = [a.end_index - b.start_index for a, b in itertools.pairwise(pieces)]
    assert all(o > 0 for o in overlaps)
    last = chunks[-1]
    assert last.text == "## Продление\nКороткий раздел." and last.start_index > pieces[-1].end_index
