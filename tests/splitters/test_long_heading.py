"""A very long heading line: its breadcrumb is bounded (``chunk.BREADCRUMB_SHARE`` of the
model's budget, cut at a word), so the chunks keep their size and their number grows with the
text, not with its square; offsets stay exact. (Peak memory: bench/hostile.py.)"""

from __future__ import annotations

from ragingest.chunk import BREADCRUMB_SHARE, bound_breadcrumb
from ragingest.splitters.factory import SplitSettings, base_splitter
from tests.splitting import split_file

MODEL = "intfloat/multilingual-e5-small"
WORDS = ("отпуск", "заявление", "длинный", "заголовок", "policy", "leave")


def test_bound_breadcrumb_cuts_at_a_word_within_the_limit():
    assert bound_breadcrumb("Глава > Раздел", 6, len) == "Глава"
    assert bound_breadcrumb("один два три четыре", 11, len) == "один два"
    assert bound_breadcrumb("одинслитный", 4, len) == "один"  # no space in reach
    assert bound_breadcrumb("короткий", 100, len) == "короткий"


def test_a_100_kb_heading_line_gives_chunks_in_proportion_to_its_size(tmp_path):
    words = " ".join(WORDS[i % len(WORDS)] + str(i) for i in range(12_000))
    text = "# " + words[: 100 * 1024] + "\n\nТекст раздела.\n"
    path = tmp_path / "heading.md"
    path.write_text(text, encoding="utf-8")
    settings = SplitSettings()
    splitter = base_splitter(settings, model=MODEL)
    chunks = split_file(path, tmp_path, splitter, settings=settings)
    tokens = splitter.token_measure.exact([text])[0]
    budget = splitter.chunk_size - splitter.max_embed_tokens // BREADCRUMB_SHARE
    assert len(chunks) <= 2 * tokens // budget + 2  # unbounded, it was one chunk per ~7 tokens
    limit = splitter.max_embed_tokens // BREADCRUMB_SHARE
    for record in chunks:
        assert text[record.metadata["start_index"] : record.metadata["end_index"]] == record.text
        prefix = record.embed_text[: len(record.embed_text) - len(record.text)].rstrip("\n")
        assert splitter.token_measure.exact([prefix])[0] <= limit
    assert chunks[0].metadata["start_index"] == 0
    assert chunks[-1].text.endswith("Текст раздела.")
