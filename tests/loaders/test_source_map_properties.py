"""Property tests of ``SourceMap``: edits, composition and line diffs keep every kept character
at its source position, spans ordered, inserted text at the next source character."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ragingest.loaders.markdown.source_map import SourceMap, apply_edits, diff_map

# sources are lower case, edits insert upper case: a lower-case output character is kept text
source_text = st.text(alphabet="abc\n", min_size=0, max_size=60)


@st.composite
def edits_of(draw, text: str, inserts: str = "XY") -> list[tuple[int, int, str]]:
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=12)))
    edits = []
    for start, end in zip(cuts[::2], cuts[1::2], strict=False):
        edits.append((start, end, draw(st.text(alphabet=inserts, max_size=3))))
    return edits


def assert_kept_characters_map_home(out: str, mapping: SourceMap) -> None:
    assert mapping.length == len(out)
    starts = [mapping.start(i) for i in range(len(out) + 1)]
    ends = [mapping.end(i) for i in range(len(out) + 1)]
    assert starts == sorted(starts) and ends == sorted(ends)
    for i, ch in enumerate(out):
        if ch.islower() or ch == "\n":
            assert mapping.text(i, i + 1) == ch, (i, out)
        first, last = mapping.span(i, i + 1)
        assert first <= last
    if out:
        assert mapping.text(0, len(out)) == mapping.source[starts[0] : ends[-1]]


@settings(max_examples=300, deadline=None)
@given(st.data(), source_text)
def test_edits_then_edits_compose(data, text):
    middle, first = apply_edits(text, data.draw(edits_of(text)))
    out, second = apply_edits(middle, data.draw(edits_of(middle, inserts="Z")))
    composed = first.compose(second)
    assert composed.source == text
    assert_kept_characters_map_home(out, composed)


@settings(max_examples=300, deadline=None)
@given(st.data(), source_text)
def test_apply_edits_map(data, text):
    out, mapping = apply_edits(text, data.draw(edits_of(text)))
    assert_kept_characters_map_home(out, mapping)


@settings(max_examples=300, deadline=None)
@given(st.data(), st.lists(st.sampled_from(["aa\n", "b\n", "\n", "abc\n"]), max_size=15))
def test_diff_map_of_removed_lines(data, lines):
    before = "".join(lines)
    keep = data.draw(st.lists(st.booleans(), min_size=len(lines), max_size=len(lines)))
    after = "".join(line for line, kept in zip(lines, keep, strict=True) if kept)
    assert_kept_characters_map_home(after, diff_map(before, after))


def test_inserted_text_maps_to_the_next_source_character():
    out, mapping = apply_edits("Title\nbody", [(0, 0, "## ")])
    assert out == "## Title\nbody"
    assert mapping.span(0, 8) == (0, 5)
    assert mapping.span(0, 3) == (0, 0)
    assert mapping.normalized(0) == 0 and mapping.normalized(6) == 9


def test_deleted_prefix_is_never_at_a_span_edge():
    out, mapping = apply_edits("\ufeff---\nx: 1\n---\nText", [(0, 14, "")])
    assert out == "Text"
    assert mapping.span(0, 4) == (14, 18)
    assert mapping.normalized(0) == 0 and mapping.normalized(16) == 2
