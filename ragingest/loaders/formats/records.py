"""Rows and records (CSV, XLSX, JSON) as documents of one content type each:

- FAQ (columns/keys «вопрос»/«question» and «ответ»/«answer»): one document for the file, each
  pair as ``## question`` + answer, any other column as a ``field: value`` line after it;
- tickets (records with a list of ``messages``): one document per ticket, metadata
  ``ticket_id``, ``status``, ``priority``, ``created_at``, ``updated_at``;
- catalogue (anything else): one card per row as ``field: value`` lines; every column also as
  metadata (keys normalized): numeric columns as int/float («цена» also as ``price``,
  «площадь» as ``area``, «вес» as ``weight``) so ``--where price<=5000`` filters work, other
  cells of up to ``TEXT_METADATA_CHARS`` characters as text (``--where category=отпуск``).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_core.documents import Document

from ragingest.loaders.base import file_metadata
from ragingest.loaders.markdown.blocks import clean_inline, clean_multiline
from ragingest.schema import CONTENT_TYPE_HINT, SCHEMA, exact_number, short_hash

QUESTION_KEYS = ("вопрос", "question", "q", "faq_question")
ANSWER_KEYS = ("ответ", "answer", "a", "faq_answer")
NAME_KEYS = ("название", "наименование", "name", "title", "товар", "product", "объект")
ALIASES = {"цена": "price", "стоимость": "price", "площадь": "area", "вес": "weight"}
_RESERVED = set(SCHEMA) | {"row", "sheet", "content_type", "subject", "from", "date"}
TEXT_METADATA_CHARS = 256  # longer cells (descriptions) are in the card text only
_NUMBER = re.compile(r"^[-+]?(?:\d+|\d{1,3}(?:[ \u00a0\u202f]\d{3})+)(?:[.,]\d+)?$")


def metadata_key(header: str) -> str:
    """The metadata key of a column header: lower case, non-word runs as '_', a ``field_`` prefix
    where it would collide with a schema key or starts with a digit."""
    key = re.sub(r"[^\w]+", "_", clean_inline(str(header)).lower()).strip("_") or "field"
    return f"field_{key}" if key in _RESERVED or key[0].isdigit() else key


def parse_number(value: object) -> int | float | str | None:
    """A number from a cell: ints and floats as they are; strings like «45 990», «12,5»,
    exactly (``schema.exact_number``: digits beyond what Chroma stores exactly stay a string)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    text = clean_inline(str(value)) if value is not None else ""
    if not text or not _NUMBER.match(text):
        return None
    return exact_number(re.sub(r"[ \u00a0\u202f]", "", text).replace(",", "."))


def cell_text(value: object) -> str:
    """A cell's value as text ("" for empty, да/нет for booleans, whole floats without '.0')."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "да" if value else "нет"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    return clean_multiline(str(value))


def _find(header: Sequence[str], names: Sequence[str]) -> int | None:
    lowered = [clean_inline(str(h)).lower() for h in header]
    return next((i for i, h in enumerate(lowered) if h in names), None)


def is_faq(header: Sequence[str]) -> bool:
    """Whether the header has both a question and an answer column."""
    return _find(header, QUESTION_KEYS) is not None and _find(header, ANSWER_KEYS) is not None


def faq_document(
    path: Path, root: Path | None, header: Sequence[str], rows: Sequence[Sequence[object]]
) -> Document:
    """The FAQ document of a table: one '## question' section per row with a question (its
    answer, then the other columns as 'label: value' lines)."""
    q, a = _find(header, QUESTION_KEYS), _find(header, ANSWER_KEYS)
    others = [(i, clean_inline(str(h)) or f"column {i + 1}") for i, h in enumerate(header)]
    others = [(i, label) for i, label in others if i not in (q, a)]
    parts = []
    for row in rows:
        question = cell_text(row[q]) if q is not None and q < len(row) else ""
        answer = cell_text(row[a]) if a is not None and a < len(row) else ""
        fields = [(label, cell_text(row[i]) if i < len(row) else "") for i, label in others]
        lines = "".join(f"\n{label}: {clean_inline(text)}" for label, text in fields if text)
        if question.strip():
            pair = f"## {clean_inline(question)}\n\n{answer}".rstrip()
            parts.append(pair + ("\n" + lines if lines else ""))
    text = "\n\n".join(parts) + "\n" if parts else ""
    metadata = file_metadata(path, root, text)
    metadata[CONTENT_TYPE_HINT] = "faq"
    return Document(page_content=text, metadata=metadata)


def catalogue_documents(
    path: Path,
    root: Path | None,
    header: Sequence[str],
    rows: Sequence[Sequence[object]],
    sheet: str = "",
) -> Iterator[Document]:
    """One card per row; numeric columns (every non-empty cell a number) as metadata."""
    labels = [clean_inline(str(h)) or f"column {i + 1}" for i, h in enumerate(header)]
    numeric = []
    for i in range(len(labels)):
        values = [row[i] for row in rows if i < len(row) and cell_text(row[i])]
        numeric.append(bool(values) and all(parse_number(v) is not None for v in values))
    name_column = _find(labels, NAME_KEYS)
    for index, row in enumerate(rows, 1):
        lines: list[str] = []
        extra: dict[str, object] = {}
        for i, label in enumerate(labels):
            value = row[i] if i < len(row) else None
            text = cell_text(value)
            if not text:
                continue
            lines.append(f"{label}: {text}")
            key = metadata_key(label)
            if numeric[i]:
                extra[key] = parse_number(value)
                alias = ALIASES.get(key) or ALIASES.get(key.split("_", 1)[0])
                if alias and alias not in extra:
                    extra[alias] = extra[key]
            elif isinstance(value, bool):
                extra[key] = value
            elif len(text) <= TEXT_METADATA_CHARS and key not in extra:
                extra[key] = clean_inline(text)
        if not lines:
            continue
        text = "\n".join(lines) + "\n"
        title = ""
        if name_column is not None and name_column < len(row):
            title = clean_inline(cell_text(row[name_column]))
        if not title:
            title = next((cell_text(v) for i, v in enumerate(row) if not numeric[i]), "")
        metadata = file_metadata(path, root, text, title=clean_inline(title)[:200] or None)
        metadata.update(extra)
        metadata["row"] = index
        metadata["doc_id"] = short_hash(metadata["source"], sheet, index)
        if sheet:
            metadata["sheet"] = sheet
        metadata[CONTENT_TYPE_HINT] = "catalogue"
        yield Document(page_content=text, metadata=metadata)


# -- tickets --------------------------------------------------------------------------------

_TICKET_FIELDS = {
    "ticket_id": ("id", "ticket_id", "number", "номер", "key"),
    "subject": ("subject", "title", "тема", "summary"),
    "status": ("status", "статус", "state"),
    "priority": ("priority", "приоритет"),
    "created_at": ("created_at", "created", "opened_at", "date", "создан"),
    "updated_at": ("updated_at", "updated", "closed_at", "resolved_at", "обновлён"),
}
_MESSAGE_TEXT = ("text", "body", "message", "content", "comment", "текст")
_MESSAGE_AUTHOR = ("author", "from", "sender", "role", "user", "автор")
_MESSAGE_DATE = ("date", "created_at", "time", "timestamp", "sent_at", "дата")
MESSAGE_LISTS = ("messages", "comments", "conversation", "сообщения")


def _pick(record: Mapping[str, object], names: Sequence[str]) -> Any:  # a JSON value
    lowered = {str(k).lower(): v for k, v in record.items()}
    return next((lowered[n] for n in names if lowered.get(n) not in (None, "")), None)


def is_ticket(record: object) -> bool:
    """Whether ``record`` is a ticket export (a dict with a list of messages)."""
    return isinstance(record, dict) and isinstance(_pick(record, MESSAGE_LISTS), list)


def ticket_document(
    path: Path, root: Path | None, record: Mapping[str, object], index: int
) -> Document | None:
    """The document of one exported ticket (a heading, its messages in order, its fields as
    metadata); ``None`` when no message has text."""
    fields = {key: _pick(record, names) for key, names in _TICKET_FIELDS.items()}
    ticket_id = cell_text(fields["ticket_id"]) or str(index)
    subject = clean_inline(cell_text(fields["subject"]))
    heading = f"Тикет {ticket_id}" + (f": {subject}" if subject else "")
    parts = [f"# {heading}"]
    for message in _pick(record, MESSAGE_LISTS) or []:
        if isinstance(message, dict):
            text = cell_text(_pick(message, _MESSAGE_TEXT))
            author = clean_inline(cell_text(_pick(message, _MESSAGE_AUTHOR)))
            when = clean_inline(cell_text(_pick(message, _MESSAGE_DATE)))
        else:
            text, author, when = cell_text(message), "", ""
        if not text.strip():
            continue
        label = ", ".join(p for p in (author, when) if p)
        parts.append(f"{label}:\n{text}" if label else text)
    if len(parts) == 1:
        return None
    text = "\n\n".join(parts) + "\n"
    extra = {k: clean_inline(cell_text(v)) for k, v in fields.items() if cell_text(v)}
    extra["ticket_id"] = ticket_id
    metadata = file_metadata(
        path, root, text, title=heading, doc_date=extra.get("updated_at") or extra.get("created_at")
    )
    metadata.update({k: v for k, v in extra.items() if k != "subject"})
    metadata["doc_id"] = short_hash(metadata["source"], "ticket", ticket_id)
    metadata[CONTENT_TYPE_HINT] = "ticket"
    return Document(page_content=text, metadata=metadata)
