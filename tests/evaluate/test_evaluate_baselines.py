"""evaluate's plain-splitter baselines (semchunk, Chonkie, LangChain) and per-kind R@k."""

from __future__ import annotations

import itertools

import pytest

from ragingest.evaluate.baselines import located
from ragingest.evaluate.configs import Config, configurations, parse_config
from ragingest.evaluate.results import ConfigResult, Evaluation, format_table

TEXT = "Первый абзац о правилах.\n\nВторой абзац: исключение из правила.\n\nТретий.\n"


def test_located_keeps_true_offsets_and_finds_the_rest() -> None:
    chunks = located(TEXT, [("Первый абзац о правилах.", 0), ("Второй абзац", 99)], "x")
    assert [(c.start_index, c.end_index) for c in chunks] == [(0, 24), (26, 38)]
    assert all(TEXT[c.start_index : c.end_index] == c.text for c in chunks)
    with pytest.raises(ValueError, match="not found"):
        located(TEXT, [("нет такого текста", None)], "x")


def test_baselines_are_in_the_default_configurations() -> None:
    names = [c.name for c in configurations(200)]
    assert names == [
        "default",
        "baseline: LangChain recursive 200/0",
        "baseline: semchunk 200",
        "baseline: Chonkie 200",
        "baseline: LlamaIndex SentenceSplitter 200",
    ]
    assert parse_config("semchunk:size=150") == Config("semchunk", 150)
    assert parse_config("chonkie:min=5,prefix=off") == Config("chonkie")
    assert parse_config("llamaindex:size=120") == Config("llamaindex", 120)


@pytest.mark.parametrize("strategy", ["semchunk", "chonkie", "recursive", "llamaindex"])
def test_baseline_chunks_are_exact_spans_in_model_tokens(strategy: str) -> None:
    from ragingest.evaluate.chunking import build_splitter, split_corpus

    corpus = {"doc": ("Раздел о настройках. " * 40 + "\n\n") * 6}
    chunks = split_corpus(build_splitter(Config(strategy, 64), None), corpus)
    assert len(chunks) > 6
    assert all(corpus["doc"][c.start : c.end] == c.text for c in chunks)
    assert all(0 < c.tokens <= 64 for c in chunks)
    covered = "".join(c.text for c in chunks).replace(" ", "")
    assert covered == corpus["doc"].replace(" ", "").replace("\n", "")


def test_table_shows_recall_at_k_per_question_kind() -> None:
    result = ConfigResult(Config(label="default"), 3, 10.0, 12, 40.0, 1.0)
    result.scores = {"recall_at_k": (0.5, 0.5)}
    result.recall_at_k_by_kind = {"rule_exception": 0.25, "single": 1.0}
    table = format_table(Evaluation("m", 5, 8, 100, [result]))
    head, row = table.splitlines()[1], table.splitlines()[3]
    assert head.split()[-4:] == ["R@k", "rule_exception", "R@k", "single"]
    assert row.split()[-2:] == ["25.0", "100.0"]
    assert result.row()["recall_at_k_by_kind"] == {"rule_exception": 25.0, "single": 100.0}


def test_langchain_markdown_pipeline_chunks_are_source_slices() -> None:
    """MarkdownHeaderTextSplitter + RecursiveCharacterTextSplitter(1000/100) rewrite the
    whitespace (indented lines stripped, blank lines dropped); each chunk is still placed at its
    source slice, embeds LangChain's own text and keeps its heading; the overlap may repeat."""
    from ragingest.evaluate.baselines import LangChainMarkdownBaseline
    from ragingest.models.resolve import load_model_info

    section = "Правило раздела номер {n}: соблюдайте порядок.\n   Исключение {n} с отступом.\n\n"
    text = "---\nnext: false\n---\n\n# Заголовок\n\n## Раздел\n\n" + "".join(
        section.format(n=n) for n in range(30)
    )
    text += "## Второй раздел\n\n::: tip Совет\nКороткий совет.\n:::\n"
    chunks = LangChainMarkdownBaseline(load_model_info(None).tokenizer).split_chunks(text)
    assert len(chunks) >= 3
    assert all(text[c.start_index : c.end_index] == c.text for c in chunks)
    assert chunks[0].text == "---\nnext: false\n---"  # front matter: a chunk of its own
    first = chunks[1]
    assert first.text.startswith("# Заголовок\n\n## Раздел\n\nПравило раздела номер 0")
    assert "\n   Исключение 0" in first.text  # the source slice keeps the indent
    assert first.embed_text.startswith("# Заголовок  \n## Раздел  \nПравило")  # LangChain's
    assert "\nИсключение 0 с отступом" in first.embed_text and first.token_count > 0
    assert chunks[-1].text.startswith("## Второй раздел") and chunks[-1].text.endswith(":::")
    assert any(b.start_index < a.end_index for a, b in itertools.pairwise(chunks))
    assert [c.start_index for c in chunks] == sorted(c.start_index for c in chunks)
