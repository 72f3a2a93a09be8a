"""Every format, built for real (fpdf2, python-docx, python-pptx, openpyxl, pandoc, email) and
parsed back by the loaders: headings recovered, pages right, tables whole, a known sentence
whole in exactly one chunk, running headers cleaned away."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ragingest.errors import ParseError
from ragingest.loaders import loader_for
from ragingest.schema import validate
from ragingest.splitters import HeadingFirstSplitter
from tests import docbuilders as b
from tests.splitting import split_file


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("formats")
    b.build_pdf(root / "regulation.pdf")
    b.build_pdf(root / "no_outline.pdf", outline=False)
    b.build_pdf(root / "owner_only.pdf", owner_password="secret")
    b.build_pdf(root / "locked.pdf", user_password="secret", owner_password="secret")
    b.build_docx(root / "policy.docx")
    b.build_pptx(root / "deck.pptx")
    b.build_html(root / "help.html")
    for fmt in ("odt", "rtf", "epub"):
        b.build_pandoc(root / f"memo.{fmt}", fmt)
    b.build_eml_thread(root / "mail")
    b.build_mbox(root / "thread.mbox")
    b.build_catalogue_csv(root / "apartments.csv")
    b.build_catalogue_xlsx(root / "furniture.xlsx")
    b.build_faq_csv(root / "faq.csv")
    b.build_tickets_json(root / "tickets.json")
    return root


@pytest.fixture(scope="module")
def fine(e5_info) -> HeadingFirstSplitter:
    """No merging of small sections, so every section is its own chunk."""
    return HeadingFirstSplitter(
        min_chunk_size=0, tokenizer=e5_info.tokenizer, max_embed_tokens=e5_info.max_embed_tokens
    )


@pytest.fixture(scope="module")
def default(e5_info) -> HeadingFirstSplitter:
    return HeadingFirstSplitter(
        tokenizer=e5_info.tokenizer, max_embed_tokens=e5_info.max_embed_tokens
    )


def load(path: Path):
    documents = list(loader_for(path, path.parent).lazy_load())
    assert len(documents) == 1
    return documents[0]


def headings(text: str) -> list[str]:
    return re.findall(r"^#{1,6} .*$", text, re.MULTILINE)


def holding(chunks, needle: str):
    found = [c for c in chunks if needle in c.text]
    assert len(found) == 1, [c.text for c in chunks]
    return found[0].metadata


def check_contract(chunks, text: str) -> None:
    for chunk in chunks:
        meta = chunk.metadata
        assert text[meta["start_index"] : meta["end_index"]] == chunk.text
        assert validate({k: v for k, v in meta.items() if not k.startswith("_")}) == []


PDF_HEADINGS = [
    "# Регламент обслуживания клиентов",
    "## 1. Общие положения",
    "### 1.1. Область применения",
    "### 1.2. Термины",
    "## 2. Сроки ответа",
    "### 2.1. Телефон и чат",
    "### 2.2. Письменные обращения",
]
CROSS_PAGE = "Линия поддержки — группа сотрудников с одинаковыми полномочиями."


@pytest.mark.slow
@pytest.mark.parametrize("name", ["regulation.pdf", "no_outline.pdf", "owner_only.pdf"])
def test_pdf_structure_pages_and_cleaning(corpus, fine, default, name):
    document = load(corpus / name)
    text = document.page_content
    assert headings(text) == PDF_HEADINGS  # outline, or font sizes without one
    assert b.PDF_HEADER not in text and "Стр." not in text  # running header, page numbers
    assert "Содержание" not in text and "...." not in text  # table of contents
    cleaning = {k: v for k, v in document.metadata["_cleaning"].items() if v}
    assert cleaning == {"header_footer_lines": 3, "page_numbers": 3, "toc_lines": 5}
    meta = document.metadata
    assert (meta["title"], meta["author"], meta["pages"]) == (b.PDF_TITLE, "Отдел качества", 3)
    assert meta["doc_date"] == "2026-02-10T09:30:00+00:00"
    chunks = split_file(corpus / name, corpus, fine)
    check_contract(chunks, text)
    assert [c.metadata["section_path"] for c in chunks] == [
        "Регламент обслуживания клиентов > 1. Общие положения",  # the title line with it
        "Регламент обслуживания клиентов > 1. Общие положения > 1.1. Область применения",
        "Регламент обслуживания клиентов > 1. Общие положения > 1.2. Термины",
        "Регламент обслуживания клиентов > 2. Сроки ответа",
        "Регламент обслуживания клиентов > 2. Сроки ответа > 2.1. Телефон и чат",
        "Регламент обслуживания клиентов > 2. Сроки ответа > 2.2. Письменные обращения",
    ]
    known = holding(chunks, b.PDF_KNOWN_SENTENCE)
    assert (known["h3"], known["page_start"], known["page_end"]) == (
        "1.1. Область применения",
        2,
        2,
    )
    across = holding(chunks, CROSS_PAGE)  # a page break is no chunk boundary
    assert (across["page_start"], across["page_end"]) == (2, 3)
    assert [(c.metadata["page_start"], c.metadata["page_end"]) for c in chunks][-1] == (3, 3)
    merged = split_file(corpus / name, corpus, default)
    check_contract(merged, text)
    assert holding(merged, CROSS_PAGE)["page_end"] == 3


def test_pdf_with_a_user_password_is_refused_clearly(corpus):
    with pytest.raises(ParseError, match="encrypted with a password") as caught:
        load(corpus / "locked.pdf")
    assert caught.value.path.endswith("locked.pdf")


def test_docx_styles_table_list_pages_header(corpus, fine):
    document = load(corpus / "policy.docx")
    text = document.page_content
    assert headings(text) == [
        "# Политика возврата товаров",
        "## Возврат товара надлежащего качества",
        "### Сроки возврата",
        "### Документы",
        "## Возврат денег",
    ]
    assert b.DOCX_HEADER not in text and "Версия 3" not in text
    assert document.metadata["_cleaning"]["header_footer_lines"] == 2
    assert (document.metadata["author"], document.metadata["doc_date"]) == (
        "Юридический отдел",
        "2026-01-15T12:00:00+00:00",
    )
    table = (
        "| Категория | Срок возврата | Условие |\n|---|---|---|\n"
        "| Одежда и обувь | 30 дней | Бирки сохранены |\n"
        "| Электроника | 14 дней | Упаковка не вскрыта |\n"
        "| Мебель | 7 дней | Без следов сборки |"
    )
    assert table in text
    assert "- Чек или выписка по карте\n- Паспорт покупателя\n- Заявление на возврат" in text
    chunks = split_file(corpus / "policy.docx", corpus, fine)
    check_contract(chunks, text)
    in_table = holding(chunks, table)
    assert in_table["section_path"] == (
        "Политика возврата товаров > Возврат товара надлежащего качества > Сроки возврата"
    )
    money = holding(chunks, b.DOCX_SENTENCE)
    assert (money["h2"], money["page_start"], money["page_end"]) == ("Возврат денег", 2, 2)
    assert in_table["page_start"] == in_table["page_end"] == 1


def test_pptx_slides_are_pages(corpus, fine):
    document = load(corpus / "deck.pptx")
    text = document.page_content
    assert headings(text) == [
        "# Обучение операторов поддержки",
        "## Приветствие клиента",
        "## Тарифы",
    ]
    assert text.count("Приветствие клиента") == 1  # the title is not repeated as body text
    assert (
        "- Назовите своё имя и компанию\n- Уточните суть вопроса\n  - Переспросите, если не поняли"
        in text
    )
    chunks = split_file(corpus / "deck.pptx", corpus, fine)
    check_contract(chunks, text)
    table = holding(chunks, "| Бизнес | 4900 ₽ | Чат, телефон, почта |")
    assert (
        "| Тариф | Цена в месяц | Каналы |"
        in next(c for c in chunks if "| Бизнес | 4900 ₽" in c.text).embed_text
    )
    assert (table["section_path"], table["page_start"], table["page_end"]) == (
        "Обучение операторов поддержки > Тарифы",
        3,
        3,
    )


def test_html_headings_without_script_style_nav(corpus, fine):
    document = load(corpus / "help.html")
    text = document.page_content
    assert document.metadata["title"] == "Справка: личный кабинет"
    for noise in ("скрипт", "трекер", "font-family", "Главная", "Контакты"):
        assert noise not in text
    assert headings(text) == [
        "# Личный кабинет",
        "## Регистрация",
        "### Подтверждение телефона",
        "## Способы оплаты",
    ]
    chunks = split_file(corpus / "help.html", corpus, fine)
    check_contract(chunks, text)
    assert holding(chunks, b.HTML_SENTENCE)["section_path"] == "Личный кабинет > Регистрация"
    table = (
        "| Способ | Комиссия |\n|---|---|\n| Карта | 0 % |\n| СБП | 0 % |\n| Счёт для юрлиц | 1 % |"
    )
    assert holding(chunks, table)["h2"] == "Способы оплаты"


@pytest.mark.slow
@pytest.mark.parametrize("suffix", ["odt", "rtf", "epub"])
def test_pandoc_formats(corpus, fine, suffix):
    document = load(corpus / f"memo.{suffix}")
    text = document.page_content
    assert headings(text) == ["# Памятка по хранению", "## Температурный режим", "## Учёт"]
    chunks = split_file(corpus / f"memo.{suffix}", corpus, fine)
    check_contract(chunks, text)
    sentence = holding(chunks, b.PANDOC_SENTENCE)
    assert sentence["section_path"] == "Памятка по хранению > Температурный режим"
    table = (
        "| Зона | Температура |\n|---|---|\n"
        "| Холодильник | от 2 до 6 °C |\n| Морозильник | ниже −18 °C |"
    )
    assert holding(chunks, table)["h2"] == "Температурный режим"


def test_eml_thread(corpus, default):
    chunks = [
        c
        for i in (1, 2, 3)
        for c in split_file(corpus / "mail" / f"thread_{i}.eml", corpus, default)
    ]
    assert len(chunks) == 3  # one message, one chunk
    metas = [c.metadata for c in chunks]
    assert {m["thread_id"] for m in metas} == {"m1@shop.example"}
    assert [m["subject"] for m in metas] == [
        b.MAIL_SUBJECT,
        f"Re: {b.MAIL_SUBJECT}",
        f"Re: Re: {b.MAIL_SUBJECT}",
    ]
    assert [m["from"] for m in metas] == [
        "Иван Петров <ivan@shop.example>",
        "Поддержка <support@romashka.ru>",
        "Иван Петров <ivan@shop.example>",
    ]
    assert [m["date"] for m in metas] == [
        "2026-03-02T09:15:00+03:00",
        "2026-03-02T10:40:00+03:00",
        "2026-03-02T11:05:00+03:00",
    ]
    assert {m["content_type"] for m in metas} == {"email"}
    assert chunks[0].text == (
        f"# {b.MAIL_SUBJECT}\n\nДобрый день!\n\nСо вчерашнего вечера остатки на складе не "
        "синхронизируются с сайтом. Заказы уходят на товары, которых уже нет."
    )
    assert chunks[1].text == (
        f"# Re: {b.MAIL_SUBJECT}\n\nИван, здравствуйте!\n\nМы перезапустили обмен с вашим "
        "складом. Остатки обновятся в течение пятнадцати минут."
    )
    assert chunks[2].text == (
        f"# Re: Re: {b.MAIL_SUBJECT}\n\nСпасибо, остатки обновились, заказы снова проходят."
    )
    assert chunks[1].metadata["in_reply_to"] == "m1@shop.example"


def test_mbox_one_document_per_message(corpus):
    documents = list(loader_for(corpus / "thread.mbox", corpus).lazy_load())
    assert [d.metadata["message_id"] for d in documents] == [
        "m1@shop.example",
        "m2@romashka.ru",
        "m3@shop.example",
    ]
    assert len({d.metadata["doc_id"] for d in documents}) == 3
    counts = [{k: v for k, v in d.metadata["_cleaning"].items() if v} for d in documents]
    assert counts == [
        {"signature_lines": 4},
        {"quoted_lines": 3, "signature_lines": 3},
        {"quoted_lines": 4},
    ]


def test_catalogue_csv_cards_with_numeric_metadata(corpus, default):
    chunks = split_file(corpus / "apartments.csv", corpus, default)
    assert len(chunks) == 4
    first = chunks[0]
    assert first.text == (
        "Название: ЖК «Северный», корпус 2, кв. 14\nРайон: Северный\nКомнаты: 1\n"
        "Площадь: 38,5\nЦена: 4900000\nОтделка: Чистовая"
    )
    meta = first.metadata
    assert (meta["price"], meta["цена"], meta["area"], meta["комнаты"], meta["row"]) == (
        4900000,
        4900000,
        38.5,
        1,
        1,
    )
    assert isinstance(meta["price"], int) and isinstance(meta["area"], float)
    assert (meta["title"], meta["content_type"], meta["strategy"]) == (
        "ЖК «Северный», корпус 2, кв. 14",
        "catalogue",
        "catalogue",
    )
    assert [c.metadata["price"] for c in chunks] == [4900000, 6750000, 11200000, 4350000]
    assert len({c.metadata["doc_id"] for c in chunks}) == 4


def test_catalogue_xlsx(corpus, default):
    chunks = split_file(corpus / "furniture.xlsx", corpus, default)
    assert [c.metadata["title"] for c in chunks] == [r[0] for r in b.XLSX_ROWS]
    assert [(c.metadata["price"], c.metadata["weight"]) for c in chunks] == [
        (45990, 62.5),
        (12990, 14),
        (4990, 21.3),
    ]
    assert [c.metadata["в_наличии"] for c in chunks] == [True, False, True]
    assert chunks[1].text == (
        "Товар: Кресло «Берген»\nКатегория: Кресла\nЦена: 12990\nВес, кг: 14\nВ наличии: нет"
    )


def test_faq_table_one_chunk_per_pair(corpus, default):
    chunks = split_file(corpus / "faq.csv", corpus, default)
    assert [c.text for c in chunks] == [
        f"## {question}\n\n{answer}" for question, answer in b.FAQ_ROWS[1:]
    ]
    assert {c.metadata["content_type"] for c in chunks} == {"faq"}


def test_tickets_json_one_chunk_per_ticket(corpus, default):
    chunks = split_file(corpus / "tickets.json", corpus, default)
    assert len(chunks) == 2
    meta = chunks[0].metadata
    assert {
        k: meta[k] for k in ("ticket_id", "status", "priority", "created_at", "updated_at")
    } == {
        "ticket_id": "1042",
        "status": "closed",
        "priority": "high",
        "created_at": "2026-03-01T10:00:00+03:00",
        "updated_at": "2026-03-01T12:30:00+03:00",
    }
    assert (meta["doc_date"], meta["content_type"]) == ("2026-03-01T12:30:00+03:00", "ticket")
    assert chunks[0].text.startswith("# Тикет 1042: Не приходит SMS с кодом\n\n")
    assert "Оператор, 2026-03-01T10:20:00+03:00:\nПроверили" in chunks[0].text
    assert chunks[1].metadata["status"] == "open"


def test_unstructured_finds_its_spacy_model_offline():
    from ragingest.loaders.formats.partition import setup

    setup()
    import spacy
    from unstructured.nlp.tokenize import sent_tokenize

    assert spacy.load("en_core_web_sm").lang == "en"
    assert sent_tokenize("The first one. The second one.") == ["The first one.", "The second one."]


@pytest.mark.parametrize("name", ["help.html", "memo.odt", "memo.epub", "memo.rtf"])
def test_a_parser_returning_nothing_for_a_file_with_text_is_an_error(corpus, monkeypatch, name):
    import ragingest.loaders.formats.office
    import ragingest.loaders.formats.partition
    import ragingest.loaders.formats.web

    for module in (
        ragingest.loaders.formats.web,
        ragingest.loaders.formats.office,
        ragingest.loaders.formats.partition,
    ):
        monkeypatch.setattr(module, "partition", lambda *args, **kwargs: [])
    with pytest.raises(ParseError, match="returned no text although the file has some"):
        load(corpus / name)


def test_json_lines_catalogue_and_plain_json(tmp_path):
    lines = tmp_path / "goods.jsonl"
    lines.write_text(
        '{"name": "Лампа", "price": 1200, "specs": {"power": 9}}\n'
        '{"name": "Торшер", "price": 5600.5, "specs": {"power": 12}}\n',
        encoding="utf-8",
    )
    documents = list(loader_for(lines, tmp_path).lazy_load())
    assert [d.page_content for d in documents] == [
        "name: Лампа\nprice: 1200\nspecs.power: 9\n",
        "name: Торшер\nprice: 5600.5\nspecs.power: 12\n",
    ]
    assert [(d.metadata["price"], d.metadata["specs_power"]) for d in documents] == [
        (1200, 9),
        (5600.5, 12),
    ]
    plain = tmp_path / "settings.json"
    plain.write_text('{"service": {"name": "Поддержка", "hours": "9-18"}}', encoding="utf-8")
    assert next(loader_for(plain, tmp_path).lazy_load()).page_content == (
        "service.name: Поддержка\nservice.hours: 9-18\n"
    )
    broken = tmp_path / "broken.json"
    broken.write_text('{"a": ', encoding="utf-8")
    with pytest.raises(ParseError, match="invalid JSON at line 1"):
        list(loader_for(broken, tmp_path).lazy_load())


def test_mdx_is_read_as_markdown(tmp_path):
    path = tmp_path / "install.mdx"
    path.write_text(
        "---\ntitle: Установка\nsidebar_position: 2\n---\n\nimport Tabs from '@theme/Tabs';\n\n"
        "# Установка\n\n## Требования\n\nНужен Python 3.12.\n",
        encoding="utf-8",
    )
    (document,) = loader_for(path, tmp_path).lazy_load()
    assert document.metadata["file_type"] == "mdx"
    assert document.metadata["title"] == "Установка"
    assert document.metadata["sidebar_position"] == 2
    assert document.page_content.lstrip().startswith("import Tabs")
