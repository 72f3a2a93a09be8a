"""Real files of every format, built by the real libraries (fpdf2, python-docx, python-pptx,
openpyxl, pandoc, the stdlib's email): the tests parse them back with the loaders, and
``python -m tests.docbuilders examples`` writes the sample corpus of ``examples/``.

Texts are constants so tests can assert exact values.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import sys
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path

# -- PDF: a regulation with a title page, a table of contents, running header and page numbers
PDF_TITLE = "Регламент обслуживания клиентов"
PDF_HEADER = "ООО «Ромашка» · Регламент обслуживания клиентов"
PDF_SECTIONS: list[tuple[int, str, list[str]]] = [
    (
        0,
        "1. Общие положения",
        [
            "Настоящий регламент определяет порядок обслуживания клиентов компании во всех "
            "каналах связи: по телефону, в чате, по электронной почте и в офисах продаж. "
            "Регламент обязателен для всех сотрудников службы поддержки.",
        ],
    ),
    (
        1,
        "1.1. Область применения",
        [
            "Регламент применяется к обращениям физических и юридических лиц. Обращения "
            "партнёров рассматриваются по отдельному соглашению, если оно заключено. "
            "Сотрудник, принявший обращение, отвечает за него до полного решения вопроса, "
            "даже если для решения нужна помощь других отделов. Руководитель смены следит "
            "за очередью и перераспределяет обращения, когда сотрудник перегружен. "
            "Отчёт о работе смены составляется в конце каждого дня и хранится один год.",
            "Обращение из социальных сетей переносится в систему учёта вручную. Если клиент "
            "написал в нескольких каналах, обращения объединяются в одно. Клиенту сообщают "
            "номер обращения в первом же ответе, чтобы он мог ссылаться на него. "
            "Каждое обращение регистрируется в системе учёта в течение пяти минут после "
            "поступления и получает уникальный номер. Номер не меняется при эскалации.",
        ],
    ),
    (
        1,
        "1.2. Термины",
        [
            "Обращение — любой запрос клиента, поступивший по официальному каналу связи. "
            "Эскалация — передача обращения на следующую линию поддержки. Линия поддержки — "
            "группа сотрудников с одинаковыми полномочиями. Приоритет — срочность обращения "
            "по шкале от одного до четырёх.",
        ],
    ),
    (
        0,
        "2. Сроки ответа",
        [
            "Сроки ответа зависят от канала обращения и приоритета. Приоритет назначает "
            "сотрудник первой линии по матрице приоритетов, утверждённой руководителем "
            "службы. Сроки считаются в рабочих часах с понедельника по пятницу.",
        ],
    ),
    (
        1,
        "2.1. Телефон и чат",
        [
            "Звонок принимается не позднее третьего гудка. В чате первый ответ даётся в "
            "течение двух минут, а решение — в течение рабочего дня. Если решение требует "
            "больше времени, сотрудник называет клиенту срок и перезванивает сам.",
        ],
    ),
    (
        1,
        "2.2. Письменные обращения",
        [
            "На письмо с пометкой «срочно» сотрудник отвечает в течение четырёх рабочих "
            "часов. На остальные письма ответ даётся в течение одного рабочего дня. Ответ "
            "подписывается именем сотрудника и содержит номер обращения.",
        ],
    ),
]
PDF_KNOWN_SENTENCE = "Каждое обращение регистрируется в системе учёта в течение пяти минут после поступления и получает уникальный номер."  # noqa: E501


def _roboto(bold: bool = False) -> str:
    import font_roboto

    return font_roboto.font_files["RobotoBold" if bold else "Roboto"]


def build_pdf(
    path: Path,
    *,
    outline: bool = True,
    user_password: str | None = None,
    owner_password: str | None = None,
) -> Path:
    """A 4-page Cyrillic PDF: title page with a dotted table of contents, sections in 16/13 pt
    (bookmarked when ``outline``), body in 11 pt, running header and ``Стр. N`` footer."""
    from fpdf import FPDF

    class Regulation(FPDF):
        def header(self) -> None:
            self.set_font("Roboto", size=8)
            self.cell(0, 6, PDF_HEADER, new_x="LMARGIN", new_y="NEXT", align="C")
            self.ln(4)

        def footer(self) -> None:
            self.set_y(-15)
            self.set_font("Roboto", size=8)
            self.cell(0, 10, f"Стр. {self.page_no()}", align="C")

    pdf = Regulation(format=(148, 210))
    pdf.add_font("Roboto", "", _roboto())
    pdf.add_font("Roboto", "B", _roboto(bold=True))
    pdf.set_title(PDF_TITLE)
    pdf.set_author("Отдел качества")
    pdf.set_creation_date(dt.datetime(2026, 2, 10, 9, 30, tzinfo=dt.UTC))
    if owner_password is not None or user_password is not None:
        pdf.set_encryption(owner_password=owner_password or "owner", user_password=user_password)
    pdf.set_auto_page_break(True, margin=18)
    pdf.add_page()
    pdf.set_font("Roboto", "B", 20)
    pdf.multi_cell(0, 10, PDF_TITLE, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(6)
    pdf.set_font("Roboto", "B", 13)
    pdf.cell(0, 8, "Содержание", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Roboto", size=11)
    for level, title, page in [
        (0, "1. Общие положения", 2),
        (1, "1.1. Область применения", 2),
        (1, "1.2. Термины", 3),
        (0, "2. Сроки ответа", 3),
    ]:
        indent = "    " * level
        pdf.cell(0, 7, f"{indent}{title} {'.' * 30} {page}", new_x="LMARGIN", new_y="NEXT")
    pdf.add_page()
    for level, title, paragraphs in PDF_SECTIONS:
        if outline:
            pdf.start_section(title, level)
        pdf.set_font("Roboto", "B", 16 if level == 0 else 13)
        pdf.multi_cell(0, 8, title, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(2)
        pdf.set_font("Roboto", size=11)
        for paragraph in paragraphs:
            pdf.multi_cell(0, 6, paragraph.strip(), new_x="LMARGIN", new_y="NEXT")
            pdf.ln(3)
    pdf.output(str(path))
    return path


# -- DOCX: a return policy with Title, Heading 1/2 styles, a list, a table and a page break
DOCX_TITLE = "Политика возврата товаров"
DOCX_HEADER = "ООО «Ромашка» — внутренний документ"
DOCX_TABLE = [
    ["Категория", "Срок возврата", "Условие"],
    ["Одежда и обувь", "30 дней", "Бирки сохранены"],
    ["Электроника", "14 дней", "Упаковка не вскрыта"],
    ["Мебель", "7 дней", "Без следов сборки"],
]
DOCX_SENTENCE = "Деньги возвращаются на карту покупателя в течение десяти рабочих дней."


def build_docx(path: Path) -> Path:
    import docx

    document = docx.Document()
    props = document.core_properties
    props.title = DOCX_TITLE
    props.author = "Юридический отдел"
    props.modified = dt.datetime(2026, 1, 15, 12, 0)
    document.sections[0].header.paragraphs[0].text = DOCX_HEADER
    document.sections[0].footer.paragraphs[0].text = "Версия 3 от 15.01.2026"
    document.add_heading(DOCX_TITLE, 0)
    document.add_paragraph(
        "Политика описывает, как покупатель возвращает товар надлежащего качества и что "
        "делает магазин, когда товар оказался с недостатком."
    )
    document.add_heading("Возврат товара надлежащего качества", 1)
    document.add_paragraph(
        "Покупатель может вернуть товар, если он не подошёл по форме, габаритам, фасону, "
        "расцветке или размеру. Товар должен сохранить товарный вид и потребительские свойства."
    )
    document.add_heading("Сроки возврата", 2)
    table = document.add_table(rows=len(DOCX_TABLE), cols=len(DOCX_TABLE[0]))
    for i, row in enumerate(DOCX_TABLE):
        for j, value in enumerate(row):
            table.cell(i, j).text = value
    document.add_heading("Документы", 2)
    for item in ("Чек или выписка по карте", "Паспорт покупателя", "Заявление на возврат"):
        document.add_paragraph(item, style="List Bullet")
    document.add_page_break()
    document.add_heading("Возврат денег", 1)
    document.add_paragraph(
        "После проверки товара магазин оформляет возврат в день обращения. "
        + DOCX_SENTENCE
        + " При оплате наличными деньги выдаются в кассе магазина."
    )
    document.save(str(path))
    return path


# -- PPTX: a training deck, one slide per topic, a table on the last slide
PPTX_TITLE = "Обучение операторов поддержки"
PPTX_TABLE = [
    ["Тариф", "Цена в месяц", "Каналы"],
    ["Базовый", "990 ₽", "Чат"],
    ["Бизнес", "4900 ₽", "Чат, телефон, почта"],
]


def build_pptx(path: Path) -> Path:
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    deck.core_properties.title = PPTX_TITLE
    slide = deck.slides.add_slide(deck.slide_layouts[0])
    slide.shapes.title.text = PPTX_TITLE
    slide.placeholders[1].text = "Вводный курс для новых сотрудников"
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Приветствие клиента"
    frame = slide.placeholders[1].text_frame
    frame.text = "Назовите своё имя и компанию"
    for text, level in (("Уточните суть вопроса", 0), ("Переспросите, если не поняли", 1)):
        paragraph = frame.add_paragraph()
        paragraph.text = text
        paragraph.level = level
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Тарифы"
    shape = slide.shapes.add_table(3, 3, Inches(0.5), Inches(2), Inches(9), Inches(2))
    for i, row in enumerate(PPTX_TABLE):
        for j, value in enumerate(row):
            shape.table.cell(i, j).text = value
    deck.save(str(path))
    return path


# -- HTML: a help-centre page with navigation, scripts, styles, h1-h3, a list and a table
HTML_SENTENCE = (
    "Пароль должен содержать не меньше десяти символов, включая цифру и заглавную букву."
)
HTML_PAGE = f"""<!DOCTYPE html>
<html lang="ru"><head><meta charset="utf-8"><title>Справка: личный кабинет</title>
<style>body {{ font-family: sans-serif; }} .x {{ color: red; }}</style>
<script>window.analytics = "трекер"; console.log("скрипт не должен попасть в текст");</script>
</head><body>
<nav><a href="/">Главная</a> <a href="/help">Справка</a> <a href="/contacts">Контакты</a></nav>
<h1>Личный кабинет</h1>
<p>В личном кабинете вы управляете заказами, адресами доставки и способами оплаты.</p>
<h2>Регистрация</h2>
<p>Для регистрации нужен номер телефона и адрес электронной почты. {HTML_SENTENCE}</p>
<h3>Подтверждение телефона</h3>
<ul><li>Введите номер телефона</li><li>Дождитесь SMS с кодом</li>
<li>Введите код на странице</li></ul>
<h2>Способы оплаты</h2>
<table><tr><th>Способ</th><th>Комиссия</th></tr><tr><td>Карта</td><td>0 %</td></tr>
<tr><td>СБП</td><td>0 %</td></tr><tr><td>Счёт для юрлиц</td><td>1 %</td></tr></table>
<script>document.write("ещё один скрипт");</script>
</body></html>
"""


def build_html(path: Path) -> Path:
    path.write_text(HTML_PAGE, encoding="utf-8")
    return path


# -- pandoc-built formats: ODT, RTF and EPUB from one Markdown source
PANDOC_MARKDOWN = """# Памятка по хранению

Вводный абзац о правилах хранения товаров на складе.

## Температурный режим

Продукты хранятся при температуре от двух до шести градусов. Датчики проверяются каждую смену.

| Зона | Температура |
|---|---|
| Холодильник | от 2 до 6 °C |
| Морозильник | ниже −18 °C |

## Учёт

- Приёмка по накладной
- Маркировка даты поступления
"""
PANDOC_SENTENCE = "Продукты хранятся при температуре от двух до шести градусов."


def build_pandoc(path: Path, fmt: str) -> Path:
    import pypandoc

    pypandoc.convert_text(
        PANDOC_MARKDOWN, fmt, format="md", outputfile=str(path), extra_args=["--standalone"]
    )
    return path


# -- e-mail: a thread of three messages (quotes and signatures to remove)
MAIL_SUBJECT = "Сбой синхронизации склада"
MAIL_DISCLAIMER = (
    "Это письмо и вложения к нему конфиденциальны и предназначены только для адресата. "
    "Если вы получили его по ошибке, сообщите отправителю и удалите письмо."
)


def _message(
    sender: str,
    subject: str,
    body: str,
    when: dt.datetime,
    message_id: str,
    reply_to: str = "",
    references: str = "",
) -> EmailMessage:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = "support@romashka.ru"
    message["Subject"] = subject
    message["Date"] = format_datetime(when)
    message["Message-ID"] = f"<{message_id}>"
    if reply_to:
        message["In-Reply-To"] = f"<{reply_to}>"
    if references:
        message["References"] = references
    message.set_content(body)
    return message


def mail_thread() -> list[EmailMessage]:
    tz = dt.timezone(dt.timedelta(hours=3))
    first = _message(
        "Иван Петров <ivan@shop.example>",
        MAIL_SUBJECT,
        "Добрый день!\n\nСо вчерашнего вечера остатки на складе не синхронизируются с "
        "сайтом. Заказы уходят на товары, которых уже нет.\n\nС уважением,\nИван Петров\n"
        "менеджер магазина\n+7 900 000-00-00\n",
        dt.datetime(2026, 3, 2, 9, 15, tzinfo=tz),
        "m1@shop.example",
    )
    second = _message(
        "Поддержка <support@romashka.ru>",
        f"Re: {MAIL_SUBJECT}",
        "Иван, здравствуйте!\n\nМы перезапустили обмен с вашим складом. Остатки обновятся в "
        "течение пятнадцати минут.\n\n-- \nСлужба поддержки «Ромашка»\n8 800 000-00-00\n\n"
        "2 марта 2026 г., 9:15, Иван Петров пишет:\n> Добрый день!\n> Со вчерашнего вечера "
        "остатки не синхронизируются.\n",
        dt.datetime(2026, 3, 2, 10, 40, tzinfo=tz),
        "m2@romashka.ru",
        reply_to="m1@shop.example",
        references="<m1@shop.example>",
    )
    third = _message(
        "Иван Петров <ivan@shop.example>",
        f"Re: Re: {MAIL_SUBJECT}",
        "Спасибо, остатки обновились, заказы снова проходят.\n\n"
        "-----Original Message-----\nFrom: Поддержка\nSent: 2 марта 2026 г. 10:40\n"
        "Мы перезапустили обмен с вашим складом.\n",
        dt.datetime(2026, 3, 2, 11, 5, tzinfo=tz),
        "m3@shop.example",
        reply_to="m2@romashka.ru",
        references="<m1@shop.example> <m2@romashka.ru>",
    )
    return [first, second, third]


def build_eml_thread(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, message in enumerate(mail_thread(), 1):
        path = folder / f"thread_{i}.eml"
        path.write_bytes(bytes(message))
        paths.append(path)
    return paths


def build_mbox(path: Path) -> Path:
    import mailbox

    box = mailbox.mbox(str(path))
    for message in mail_thread():
        box.add(message)
    box.flush()
    box.close()
    return path


# -- catalogue: apartments for sale (CSV) and furniture (XLSX)
CATALOGUE_HEADER = ["Название", "Район", "Комнаты", "Площадь", "Цена", "Отделка"]
CATALOGUE_ROWS = [
    ["ЖК «Северный», корпус 2, кв. 14", "Северный", 1, 38.5, 4900000, "Чистовая"],
    ["ЖК «Северный», корпус 3, кв. 77", "Северный", 2, 54.2, 6750000, "Без отделки"],
    ["ЖК «Парковый», корпус 1, кв. 5", "Центральный", 3, 81.0, 11200000, "Чистовая"],
    ["ЖК «Парковый», корпус 1, кв. 19", "Центральный", 1, 33.9, 4350000, "Предчистовая"],
]


def build_catalogue_csv(path: Path) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter=";")
        writer.writerow(CATALOGUE_HEADER)
        for row in CATALOGUE_ROWS:
            writer.writerow([str(v).replace(".", ",") if isinstance(v, float) else v for v in row])
    return path


XLSX_HEADER = ["Товар", "Категория", "Цена", "Вес, кг", "В наличии"]
XLSX_ROWS = [
    ["Диван «Осло»", "Диваны", 45990, 62.5, True],
    ["Кресло «Берген»", "Кресла", 12990, 14.0, False],
    ["Стол «Тромсё»", "Столы", 4990, 21.3, True],
]


def build_catalogue_xlsx(path: Path) -> Path:
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.title = "Мебель"
    sheet.append(XLSX_HEADER)
    for row in XLSX_ROWS:
        sheet.append(row)
    book.save(str(path))
    return path


# -- FAQ as a table, tickets as a JSON export
FAQ_ROWS = [
    ["Вопрос", "Ответ"],
    [
        "Как отследить заказ?",
        "Откройте «Мои заказы» и нажмите «Отследить»: там виден статус и трек-номер.",
    ],
    [
        "Можно ли изменить адрес доставки?",
        "Да, пока заказ не передан в службу доставки. Напишите в чат номер заказа и новый адрес.",
    ],
    [
        "Сколько хранится заказ в пункте выдачи?",
        "Семь дней. Срок можно продлить один раз на три дня в приложении.",
    ],
]


def build_faq_csv(path: Path) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows(FAQ_ROWS)
    return path


TICKETS = [
    {
        "id": 1042,
        "subject": "Не приходит SMS с кодом",
        "status": "closed",
        "priority": "high",
        "created_at": "2026-03-01T10:00:00+03:00",
        "updated_at": "2026-03-01T12:30:00+03:00",
        "messages": [
            {
                "author": "Клиент",
                "date": "2026-03-01T10:00:00+03:00",
                "text": "Уже час не приходит SMS с кодом для входа.",
            },
            {
                "author": "Оператор",
                "date": "2026-03-01T10:20:00+03:00",
                "text": "Проверили: номер был в стоп-листе оператора связи. "
                "Убрали, отправьте код ещё раз.",
            },
            {
                "author": "Клиент",
                "date": "2026-03-01T12:30:00+03:00",
                "text": "Код пришёл, спасибо.",
            },
        ],
    },
    {
        "id": 1043,
        "subject": "Двойное списание",
        "status": "open",
        "priority": "normal",
        "created_at": "2026-03-02T09:00:00+03:00",
        "updated_at": "2026-03-02T09:40:00+03:00",
        "messages": [
            {
                "author": "Клиент",
                "date": "2026-03-02T09:00:00+03:00",
                "text": "С карты дважды списали оплату заказа 5531.",
            },
            {
                "author": "Оператор",
                "date": "2026-03-02T09:40:00+03:00",
                "text": "Второе списание — холдирование банка, оно снимется за три дня.",
            },
        ],
    },
]


def build_tickets_json(path: Path) -> Path:
    path.write_text(json.dumps({"tickets": TICKETS}, ensure_ascii=False, indent=2), "utf-8")
    return path


def main(argv: list[str]) -> int:
    target = Path(argv[0]) if argv else Path("examples")
    target.mkdir(parents=True, exist_ok=True)
    build_pdf(target / "regulation_service.pdf")
    build_docx(target / "return_policy.docx")
    build_html(target / "help_account.html")
    build_faq_csv(target / "faq_orders.csv")
    build_catalogue_csv(target / "catalogue_apartments.csv")
    mail = target / "mail_thread"
    for i, message in enumerate(mail_thread(), 1):
        mail.mkdir(exist_ok=True)
        (mail / f"{i:02d}.eml").write_bytes(bytes(message))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
