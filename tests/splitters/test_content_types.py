"""Content types (docs/rules.md): FAQ, e-mail, tickets, catalogue, plain text (headings found,
or the paragraph strategy), config overrides, tables never cut, and the cleaning rules."""

from __future__ import annotations

import itertools
import random
import re
from pathlib import Path

import pytest

from ragingest.loaders import CleaningRules, loader_for
from ragingest.loaders.cleaning.corpus import CorpusCleaner
from ragingest.loaders.formats.text import decode
from ragingest.loaders.markdown.plain_headings import text_headings
from ragingest.splitters import HeadingFirstSplitter
from ragingest.splitters.content_types import ContentTypeConfig, detect
from ragingest.splitters.paragraph import ParagraphSplitter
from tests import docbuilders as b
from tests.conftest import EXAMPLES
from tests.splitting import split_file

LONG_ANSWER = " ".join(
    f"Шаг {i}: откройте раздел номер {i} в настройках, проверьте параметр доставки и сохраните "
    f"изменения, затем дождитесь письма с подтверждением номер {i}."
    for i in range(1, 40)
)


@pytest.fixture(scope="module")
def base(e5_info) -> HeadingFirstSplitter:
    return HeadingFirstSplitter(
        tokenizer=e5_info.tokenizer, max_embed_tokens=e5_info.max_embed_tokens
    )


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_faq_pairs_are_never_merged_and_long_answers_repeat_the_question(tmp_path, base):
    faq = EXAMPLES / "faq_delivery.md"
    chunks = split_file(faq, EXAMPLES, base)
    assert [c.text.split("\n", 1)[0] for c in chunks] == [
        "## Сколько стоит доставка по Москве?",
        "## Можно ли выбрать время доставки?",
        "## Что делать, если курьер опоздал?",
        "## Доставляете ли вы в другие города?",
        "## Можно ли оплатить заказ при получении?",
    ]
    assert {c.metadata["content_type"] for c in chunks} == {"faq"}
    text = (
        "# Частые вопросы\n\n## Как настроить доставку?\n\n"
        + LONG_ANSWER
        + "\n\n## Кратко?\n\nДа.\n"
    )
    path = write(tmp_path / "help.md", text)
    chunks = split_file(path, tmp_path, base)
    long = [c for c in chunks if c.metadata["h2"] == "Как настроить доставку?"]
    assert len(long) >= 2
    for piece in long:
        assert piece.embed_text.lstrip("# ").startswith("Как настроить доставку?")
        assert piece.metadata["token_count"] <= 512
    assert chunks[-1].text == "## Кратко?\n\nДа."


def test_faq_with_question_answer_markers(tmp_path, base):
    text = (
        "Вопрос: Где мой заказ?\nОтвет: В разделе «Мои заказы».\n\n"
        "Вопрос: Как вернуть товар?\nОтвет: Оформите заявку в личном кабинете.\n"
    )
    path = write(tmp_path / "qa.txt", text)
    chunks = split_file(path, tmp_path, base)
    assert [(c.text, c.metadata["h2"]) for c in chunks] == [
        ("Вопрос: Где мой заказ?\nОтвет: В разделе «Мои заказы».", "Где мой заказ?"),
        (
            "Вопрос: Как вернуть товар?\nОтвет: Оформите заявку в личном кабинете.",
            "Как вернуть товар?",
        ),
    ]
    assert {c.metadata["content_type"] for c in chunks} == {"faq"}


def test_long_mail_is_split_by_paragraphs_after_its_subject(tmp_path, base):
    message = b._message(
        "Анна <anna@example.ru>",
        "Инструкция по настройке",
        "\n\n".join(LONG_ANSWER[i : i + 400] for i in range(0, len(LONG_ANSWER), 400)),
        b.dt.datetime(2026, 4, 1, 8, 0, tzinfo=b.dt.UTC),
        "long@example.ru",
    )
    path = tmp_path / "long.eml"
    path.write_bytes(bytes(message))
    chunks = split_file(path, tmp_path, base)
    assert len(chunks) >= 2
    assert {c.metadata["strategy"] for c in chunks} == {"email"}
    for chunk in chunks:
        assert chunk.embed_text.lstrip("# ").startswith("Инструкция по настройке")
        assert chunk.metadata["thread_id"] == "long@example.ru"


PLAIN_WITH_HEADINGS = """ПРАВИЛА ВНУТРЕННЕГО РАСПОРЯДКА

Глава 1. Общие положения

Статья 1. Сфера действия

Правила действуют для всех сотрудников.

Статья 2. Рабочее время

Рабочий день начинается в 9:00.

Глава 2. Отпуска

1. Порядок предоставления

Отпуск предоставляется по графику.

1.1 Перенос отпуска

Перенос согласуется с руководителем.

Приложение
----------

Формы заявлений.
"""


def test_plain_text_headings_are_detected():
    text, found = text_headings(PLAIN_WITH_HEADINGS)
    assert found
    assert [line for line in text.split("\n") if line.startswith("#")] == [
        "# ПРАВИЛА ВНУТРЕННЕГО РАСПОРЯДКА",  # alone at the top: the title
        "## Глава 1. Общие положения",
        "#### Статья 1. Сфера действия",
        "#### Статья 2. Рабочее время",
        "## Глава 2. Отпуска",
        "##### 1. Порядок предоставления",
        "###### 1.1 Перенос отпуска",
        "### Приложение",  # underlined with ---
    ]
    assert "----------" not in text
    list_text, found = text_headings("Шаги:\n\n1. Откройте меню\n2. Нажмите кнопку\n")
    assert not found and list_text.startswith("Шаги:")


def test_plain_text_without_headings_uses_paragraphs(tmp_path, base):
    short = "Коротко."  # under 50 characters: merges with the next paragraph
    middle = "Второй абзац описывает условия хранения, т. е. температуру и влажность воздуха."
    sentences = [
        f"Предложение номер {i} рассказывает о правилах приёмки товара на складе, "
        f"см. ст. {i} регламента, и о том, кто подписывает акт."
        for i in range(1, 31)
    ]
    long = " ".join(sentences)
    path = write(tmp_path / "notes.txt", f"{short}\n\n{middle}\n\n{long}\n")
    chunks = split_file(path, tmp_path, base)
    assert {c.metadata["content_type"] for c in chunks} == {"paragraph"}
    assert chunks[0].text == f"{short}\n\n{middle}"
    pieces = [c.text for c in chunks[1:]]
    assert len(pieces) >= 3
    assert all(len(p) <= 1500 for p in pieces)
    for piece in pieces:  # cut only between sentences («см. ст. 5» ends none)
        assert piece.startswith("Предложение номер ") and piece.endswith("акт.")
    for a, c in itertools.pairwise(pieces):  # overlap only here: whole sentences
        assert c.split(". ", 1)[0] in a
    assert all(any(s in p for p in pieces) for s in sentences)


def test_paragraph_splitter_alone(base):
    text = "a" * 10 + "\n\n" + "Абзац достаточной длины, чтобы остаться отдельным фрагментом."
    chunks = ParagraphSplitter(base).split_chunks(text)
    assert [c.text for c in chunks] == [text]


def test_config_overrides_the_detected_type(tmp_path, base):
    path = write(
        tmp_path / "notes" / "a.md", "# Заметка\n\n## Раздел?\n\nТекст.\n\n## Ещё?\n\nДа.\n"
    )
    assert detect(path.read_text(), {"source": "notes/a.md"}) == "faq"
    write(tmp_path / ".ragingest.toml", '[content_types]\n"notes/*.md" = "paragraph"\n')
    chunks = split_file(path, tmp_path, base)
    assert {c.metadata["content_type"] for c in chunks} == {"paragraph"}
    config = ContentTypeConfig.parse(["*.md=document"])
    assert (
        split_file(path, tmp_path, base, content_types=config)[0].metadata["content_type"]
        == "document"
    )
    with pytest.raises(ValueError, match="unknown"):
        ContentTypeConfig.parse(["*.md=poetry"])


def test_a_table_over_the_chunk_size_stays_whole(tmp_path, base):
    rows = "\n".join(f"| Товар {i} | {i * 100} руб. | склад {i % 7} |" for i in range(20))
    text = f"# Прайс\n\n## Цены\n\nВступление.\n\n| Товар | Цена | Склад |\n|---|---|---|\n{rows}\n"
    path = write(tmp_path / "price.md", text)
    chunks = split_file(path, tmp_path, base)
    tables = [c for c in chunks if c.metadata["strategy"] == "table"]
    assert len(tables) == 1 and tables[0].metadata["oversized"] is True
    assert tables[0].text.startswith("| Товар | Цена | Склад |")
    assert tables[0].text.endswith("| Товар 19 | 1900 руб. | склад 5 |")


def test_a_table_over_the_model_limit_is_cut_by_rows_with_its_header(tmp_path, base):
    rows = "\n".join(f"| Товар {i} | {i * 100} руб. | склад {i % 7} |" for i in range(400))
    table = f"| Товар | Цена | Склад |\n|---|---|---|\n{rows}"
    text = f"# Прайс\n\n## Цены\n\nВступление.\n\n{table}\n"
    path = write(tmp_path / "price.md", text)
    chunks = split_file(path, tmp_path, base)
    tables = [c for c in chunks if c.metadata["strategy"] == "table"]
    start = text.index(table)
    assert len(tables) == 15
    assert tables[0].metadata["start_index"] == start
    assert tables[-1].text.endswith("| Товар 399 | 39900 руб. | склад 0 |")
    # the table (~7 000 tokens) is over the parent size: runs of row pieces are the parents
    parents = sorted({(c.metadata["parent_start"], c.metadata["parent_end"]) for c in tables})
    assert len(parents) == 8  # two ~480-token pieces a parent, the last alone
    assert parents[0][0] == start and parents[-1][1] == start + len(table)
    assert max(base.measure.index(text).count(a, b) for a, b in parents) <= 1000
    for chunk in tables:  # whole rows, exact slices, none truncated
        assert chunk.text.startswith("| ") and chunk.text.endswith(" |")
        assert text[chunk.metadata["start_index"] : chunk.metadata["end_index"]] == chunk.text
        assert (chunk.metadata["parent_start"], chunk.metadata["parent_end"]) in parents
        assert chunk.metadata["oversized"] is False
        embedded = chunk.embed_text
        assert "| Товар | Цена | Склад |\n|---|---|---|\n" in embedded
        assert base.token_measure.exact([embedded])[0] <= base.max_embed_tokens


def distinct_prose(seed: int) -> str:
    """Twelve sentences of the example documents' words in an order of their own."""
    vocabulary = sorted(
        {w for p in EXAMPLES.glob("*.md") for w in re.findall(r"[а-яё]{4,}", p.read_text("utf-8"))}
    )
    words = random.Random(seed).sample(vocabulary, 72)
    return " ".join(f"{' '.join(words[k : k + 6]).capitalize()}." for k in range(0, 72, 6))


def test_cleaning_rules_switch_off_and_boilerplate_across_files(tmp_path, base):
    pdf = b.build_pdf(tmp_path / "r.pdf")
    kept = next(
        loader_for(pdf, tmp_path, cleaning=CleaningRules.parse(["headers_footers"])).lazy_load()
    )
    assert b.PDF_HEADER in kept.page_content and "Стр." not in kept.page_content
    everything = CleaningRules.parse(["all"])
    raw = next(loader_for(pdf, tmp_path, cleaning=everything).lazy_load()).page_content
    assert "Стр. 2" in raw and "Содержание" in raw
    with pytest.raises(ValueError, match="unknown cleaning"):
        CleaningRules.parse(["nope"])
    corpus = CorpusCleaner()
    paths = []
    for i in range(4):  # distinct letters, each ending in the disclaimer
        body = f"# Письмо {i}\n\n{distinct_prose(i)}\n\n{b.MAIL_DISCLAIMER}\n"
        paths.append(write(tmp_path / "mails" / f"{i}.md", body))
    for path in paths:
        corpus.observe(str(path), [(d.page_content, ()) for d in loader_for(path).lazy_load()])
    chunks = split_file(paths[0], tmp_path, base, corpus=corpus)
    assert b.MAIL_DISCLAIMER not in " ".join(c.text for c in chunks)
    assert chunks.cleaning["boilerplate_paragraphs"] == 1


def test_cyrillic_encodings_decode():
    text = "Привет, мир! Съешь же ещё этих мягких французских булок, да выпей чаю."
    for codec in ("cp1251", "koi8_r", "cp866", "utf-16-le", "utf-16", "utf-8-sig"):
        assert decode(text.encode(codec), "x.txt") == text, codec


def test_cli_rejects_an_unknown_cleaning_rule(tmp_path, capsys):
    from ragingest.cli.main import main

    (tmp_path / "a.md").write_text("# A\n\ntext\n", encoding="utf-8")
    code = main(
        [
            "ingest",
            str(tmp_path),
            "--persist-dir",
            str(tmp_path / "db"),
            "--collection",
            "unknown-rule",
            "--no-clean",
            "footnotes",
            "--no-progress",
        ]
    )
    assert code == 2
    assert "unknown cleaning rule(s) ['footnotes']" in capsys.readouterr().err


def test_question_answer_keys_inside_code_do_not_make_a_faq():
    from ragingest.splitters.content_types import detect

    page = (
        "# Формы\n\n## Привязка\n\nПоле связывают с данными так:\n\n```js\nconst faq = [{\n"
        "  question: 'Что такое v-model?',\n  answer: 'Двусторонняя привязка',\n}, {\n"
        "  question: 'А модификаторы?',\n  answer: 'lazy, number, trim',\n}]\n```\n\n"
        "### Модификаторы\n\nМодификатор `.lazy` обновляет значение после `change`.\n"
    )
    assert detect(page, {"source": "guide/forms.md"}) == "document"
    prose = page.replace("```js\n", "").replace("```\n", "")
    assert detect(prose, {"source": "guide/forms.md"}) == "faq"  # the same keys as prose do
