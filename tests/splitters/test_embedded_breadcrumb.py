"""What a heading-first chunk embeds before its text: the document's H1 and the nearest heading it
lies under (a deeper heading inside its section included), not the middle of the path and not
a title known only from metadata; the metadata keeps the whole path."""

from __future__ import annotations

from ragingest.splitters import HeadingFirstSplitter
from ragingest.splitters.structure import analyze

SENTENCE = "о том, как удалить ресурс и что при этом остаётся."
PARAGRAPHS = "\n\n".join(f"Абзац {i} {SENTENCE}" for i in range(6))
DOC = (
    "# Руководство\n\n"
    "## Настройка\n\n"
    "### Хранилище\n\n"
    "Вводный абзац о хранилище.\n\n"
    "#### Удаление ресурса\n\n"
    f"{PARAGRAPHS}\n"
)


def split(text: str, title: str = "", size: int = 200):
    splitter = HeadingFirstSplitter(size, 0, 0, unit="chars", max_embed_tokens=None)
    return splitter.split_chunks(text, title=title)


def test_open_at_gives_every_level_open_at_a_position():
    structure = analyze(DOC)
    assert structure.open_at(DOC.index("Абзац 3")) == (
        (1, "Руководство"),
        (2, "Настройка"),
        (3, "Хранилище"),
        (4, "Удаление ресурса"),
    )
    assert structure.open_at(DOC.index("### Хранилище")) == ((1, "Руководство"), (2, "Настройка"))
    assert structure.open_at(0) == ()


def test_a_chunk_below_a_deeper_heading_embeds_the_h1_and_that_heading():
    chunks = split(DOC)
    assert [c.text[:7] for c in chunks] == ["# Руков", "Абзац 1", "Абзац 4"]
    for chunk in chunks[1:]:
        assert chunk.embed_text == "Руководство > Удаление ресурса\n" + chunk.text
        assert chunk.section_path == "Руководство > Настройка > Хранилище"  # metadata: all
    # cut at the section's start: its H1 and its own heading
    assert chunks[0].embed_text == "Руководство > Хранилище\n" + chunks[0].text


def test_a_metadata_title_is_embedded_only_where_no_heading_is():
    section = "## Выдача\n\n" + PARAGRAPHS + "\n"
    first, second, *_ = split(section, title="Памятка")
    assert first.embed_text == first.text  # its heading is written at its start
    assert second.embed_text == "Выдача\n" + second.text
    assert (second.title, second.section_path) == ("Памятка", "Памятка > Выдача")
    (plain,) = split("Срок выдачи три дня.\n", title="Памятка")
    assert plain.embed_text == "Памятка\nСрок выдачи три дня."
