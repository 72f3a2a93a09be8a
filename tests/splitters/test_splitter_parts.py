"""Direct contract tests of the splitters' parts: packing, measure, sentences, units."""

from __future__ import annotations

import pytest

from ragingest.splitters import HeadingFirstSplitter
from ragingest.splitters.faq import FaqSplitter
from ragingest.splitters.measure import Measure
from ragingest.splitters.packing import LINE, PARAGRAPH, SENTENCE, WORD, candidates, pack
from ragingest.splitters.sentences import sentence_starts
from ragingest.splitters.structure import analyze

PHRASES = " ".join(f"Фраза {i} о правиле." for i in range(8))  # 18 chars each, 151 in all


def chars_pack(text: str, budget: int, overlap: int = 0) -> list[tuple[int, int]]:
    return pack(text, 0, len(text), budget, overlap, Measure("chars").index(text), analyze(text))


# -- packing ------------------------------------------------------------------------------------
def test_pack_cuts_at_the_strongest_boundary_that_fits():
    text = (
        "Первое предложение о выдаче. Второе предложение о сроке.\n\n"
        "Новый абзац, т. е. продолжение. Конец текста тут."
    )
    assert candidates(text, 0, len(text), analyze(text)) == {
        29: SENTENCE,
        58: PARAGRAPH,
        90: SENTENCE,
    }
    assert chars_pack(text, 60) == [(0, 56), (58, 107)]  # the paragraph, not a sentence
    assert chars_pack(text, 200) == [(0, len(text))]  # fits: one piece


def test_text_without_headings_is_cut_at_its_lines_before_a_later_sentence():
    text = "Короткий абзац о сроке.\n" + PHRASES  # a 23-char line, then 151 chars of sentences
    counter, structure = Measure("chars").index(text), analyze(text)
    # packed: the line and four sentences of the next paragraph share the first piece
    assert pack(text, 0, len(text), 100, 0, counter, structure) == [(0, 99), (100, 175)]
    assert pack(text, 0, len(text), 100, 0, counter, structure, paragraphs_first=True) == [
        (0, 23),
        (24, 118),
        (119, 175),
    ]
    splitter = HeadingFirstSplitter(
        chunk_size=100, chunk_overlap=0, min_chunk_size=0, length_function=len
    )
    assert [(c.start_index, c.end_index) for c in splitter.split_chunks(text)] == [
        (0, 23),
        (24, 118),
        (119, 175),
    ]
    # under a heading the section is the structure: its pieces are packed
    headed = "## Раздел\n" + text
    assert [(c.start_index, c.end_index) for c in splitter.split_chunks(headed)] == [
        (0, 90),
        (91, 185),
    ]


def test_pack_overlaps_by_whole_sentences_within_the_budget():
    assert chars_pack(PHRASES, 60, 20) == [(0, 56), (38, 94), (76, 132), (133, 151)]
    assert chars_pack(PHRASES, 60, 0) == [(0, 56), (57, 113), (114, 151)]
    for start, end in chars_pack(PHRASES, 60, 20):
        assert end - start <= 60 and PHRASES[start:end] == PHRASES[start:end].strip()


def test_pack_keeps_tables_whole_and_never_overlaps_across_a_heading():
    text = "Текст до таблицы.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n\nТекст после."
    assert [text[a:b] for a, b in chars_pack(text, 20)] == [
        "Текст до таблицы.",
        "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |",  # over the budget, still whole
        "Текст после.",
    ]
    headed = "# A\n\nОдин два три четыре.\n## B\n\nПять шесть семь восемь."
    assert chars_pack(headed, 30, 15) == [(0, 25), (26, 55)]
    line = "строка один\nСтрока два"
    assert candidates(line, 0, len(line), analyze(line)) == {12: LINE}
    wrapped = "строка один\nстрока два"  # a line break inside a sentence: a word boundary
    assert candidates(wrapped, 0, len(wrapped), analyze(wrapped)) == {12: WORD}


# -- measure ------------------------------------------------------------------------------------
def test_measure_counts_adds_up_and_matches_exact(e5_info):
    text = "Срок выдачи альбомов — три дня."
    tokens = Measure("tokens", e5_info.tokenizer)
    counter = tokens.index(text)
    assert tokens.exact([text]) == [9] and counter.count(0, len(text)) == 9
    assert counter.boundaries(0, len(text))[:5] == [0, 4, 9, 11, 18]
    cut = 12
    assert counter.count(0, cut) + counter.count(cut, len(text)) == 9
    assert Measure("words").exact([text]) == [6] == [Measure("words").index(text).count(0, 31)]
    assert Measure("chars").exact([text]) == [31] == [Measure("chars").index(text).count(0, 31)]
    with pytest.raises(ValueError, match="needs the embedding model's tokenizer"):
        Measure("tokens")
    with pytest.raises(ValueError, match="unit must be one of"):
        Measure("lines")  # type: ignore[arg-type]


# -- sentences ----------------------------------------------------------------------------------
def test_sentence_starts_skip_abbreviations_and_initials():
    text = "Автор — А. С. Пушкин. См. ст. 5 и т. д. Далее! Ещё? «Цитата» здесь."
    assert sentence_starts(text) == [22, 47, 52]
    assert [text[i : i + 3] for i in sentence_starts(text)] == ["См.", "Ещё", "«Ци"]
    assert sentence_starts(PHRASES) == [19 * i for i in range(1, 8)]
    assert sentence_starts(PHRASES, 19, 60) == [38, 57]  # only inside (start, end)


# -- units (content-type splitters) -------------------------------------------------------------
def test_a_unit_over_the_size_is_packed_and_every_piece_carries_its_lead():
    base = HeadingFirstSplitter(40, 0, 0, unit="chars")
    steps = " ".join(f"Шаг {i}: нажмите кнопку." for i in range(6))
    text = f"## Как продлить заявку?\n\n{steps}\n\n## Сколько стоит?\n\nБесплатно."
    chunks = FaqSplitter(base).split_chunks(text)
    assert [(c.start_index, c.end_index) for c in chunks] == [
        (0, 23),
        *[(25 + 23 * i, 47 + 23 * i) for i in range(6)],
        (164, 193),
    ]
    for chunk in chunks:
        assert text[chunk.start_index : chunk.end_index] == chunk.text
        assert chunk.strategy == "faq"
    assert [c.embed_text for c in chunks[1:7]] == [
        f"Как продлить заявку?\nШаг {i}: нажмите кнопку." for i in range(6)
    ]
    assert chunks[-1].embed_text == "## Сколько стоит?\n\nБесплатно."  # whole: no lead added
