"""A heading goes with the text under it: a title with no body of its own joins the next
section (as ``MarkdownHeaderTextSplitter`` files it with the content under it), and no piece
of a long section ends on a heading line. Offsets stay exact."""

from __future__ import annotations

import re

import pytest
from langchain_core.documents import Document
from langchain_text_splitters import MarkdownHeaderTextSplitter

from ragingest.splitters.heading_first import HeadingFirstSplitter

PARKING = (
    "# Регламент парковки\n\n## Пропуска\n\nПропуск выдаёт охрана по заявке.\n\n"
    "## Гости\n\nГостей встречают у ворот.\n"
)
HEADERS = [("#", "h1"), ("##", "h2")]
HEADING_LINE = re.compile(r"#{1,6} [^\n]*")


def only_headings(text: str) -> bool:
    return all(HEADING_LINE.fullmatch(line) for line in text.split("\n") if line.strip())


@pytest.mark.parametrize(
    "options",
    [
        {"headers_to_split_on": HEADERS, "min_chunk_size": 0},
        {"min_chunk_size": 0},
        {"headers_to_split_on": HEADERS, "min_chunk_size": 0, "chunk_size": 20},
    ],
)
def test_a_bare_title_goes_with_the_first_section(e5_info, options):
    splitter = HeadingFirstSplitter(tokenizer=e5_info.tokenizer, **options)
    chunks = splitter.split_chunks(PARKING)
    first = PARKING.index("Пропуск выдаёт")
    assert chunks[0].start_index == 0 and chunks[0].end_index > first
    assert chunks[0].text.startswith("# Регламент парковки\n\n## Пропуска\n\nПропуск выдаёт")
    assert not any(only_headings(c.text) for c in chunks)
    for chunk in chunks:
        assert PARKING[chunk.start_index : chunk.end_index] == chunk.text


def test_the_sections_match_markdown_header_text_splitter(e5_info):
    splitter = HeadingFirstSplitter(
        tokenizer=e5_info.tokenizer, headers_to_split_on=HEADERS, min_chunk_size=0
    )
    ours = splitter.split_documents([Document(page_content=PARKING)])
    theirs = MarkdownHeaderTextSplitter(HEADERS).split_text(PARKING)
    assert [d.page_content for d in ours] == [
        "# Регламент парковки\n\n## Пропуска\n\nПропуск выдаёт охрана по заявке.",
        "## Гости\n\nГостей встречают у ворот.",
    ]
    assert [(d.metadata["h1"], d.metadata["h2"]) for d in ours] == [
        (d.metadata["h1"], d.metadata["h2"]) for d in theirs
    ]
    assert [(d.metadata["start_index"], d.metadata["end_index"]) for d in ours] == [
        (0, 67),
        (69, 104),
    ]


def test_default_settings_keep_no_bare_heading(e5_info):
    chunks = HeadingFirstSplitter(tokenizer=e5_info.tokenizer).split_chunks(PARKING)
    assert [(c.start_index, c.end_index) for c in chunks] == [(0, len(PARKING) - 1)]
    body = " ".join(f"Пропуск номер {i} выдаёт охрана по заявке отдела." for i in range(40))
    text = f"# Регламент парковки\n\n## Пропуска\n\n{body}\n\n## Гости\n\nГостей встречают.\n"
    chunks = HeadingFirstSplitter(tokenizer=e5_info.tokenizer).split_chunks(text)
    assert not any(only_headings(c.text) for c in chunks)
    assert chunks[0].start_index == 0 and chunks[0].parent[0] == 0


def test_a_piece_of_a_long_section_never_ends_on_a_heading_line():
    p1 = " ".join(["Охрана выдаёт пропуск."] * 10)
    text = f"## Пропуска\n\n{p1}\n\n#### Гости\n\nГость ждёт у ворот. Его встречает сотрудник.\n"
    chunks = HeadingFirstSplitter(100, 0, 0, unit="chars").split_chunks(text)
    guests = text.index("#### Гости")
    assert [(c.start_index, c.end_index) for c in chunks] == [
        (0, 81),
        (82, 173),
        (174, 242),
        (guests, len(text) - 1),
    ]
    assert not any(c.text.endswith("#### Гости") for c in chunks)


def test_a_heading_too_long_for_its_first_sentence_may_stand_alone():
    """Keeping the heading would cut a sentence in two; a bare heading is the lesser harm."""
    steps = " ".join(f"Шаг {i}: нажмите кнопку." for i in range(3))
    text = f"## Как продлить заявку?\n\n{steps}\n"
    chunks = HeadingFirstSplitter(40, 0, 0, unit="chars").split_chunks(text)
    assert chunks[0].text == "## Как продлить заявку?"
    assert all(c.text.startswith(("##", "Шаг")) for c in chunks)  # no sentence cut
