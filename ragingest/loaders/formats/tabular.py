"""Tables as data: CSV/TSV (stdlib ``csv``), XLSX (openpyxl), JSON/JSONL (stdlib ``json``).

Read directly rather than with unstructured, which turns a sheet into one HTML table: a
catalogue needs a card per row and typed cells (numbers stay numbers for metadata filters).
What each row or record becomes — catalogue card, FAQ pair, ticket — is in ``records``.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator, Sequence
from typing import Any

from langchain_core.documents import Document

from ragingest.errors import ParseError
from ragingest.loaders.base import FileLoader, file_metadata
from ragingest.loaders.formats.archives import check_archive
from ragingest.loaders.formats.records import (
    catalogue_documents,
    faq_document,
    is_faq,
    is_ticket,
    ticket_document,
)
from ragingest.loaders.formats.text import decode
from ragingest.loaders.notes import note_file, summarize

csv.field_size_limit(16 * 2**20)


def _rows_documents(
    loader: FileLoader, header: Sequence[object], rows: Sequence[Sequence[object]], sheet: str = ""
) -> Iterator[Document]:
    names = [str(h) if h is not None else "" for h in header]
    if is_faq(names):
        yield faq_document(loader.path, loader.root, names, rows)
    else:
        yield from catalogue_documents(loader.path, loader.root, names, rows, sheet)


class CsvLoader(FileLoader):
    """CSV and TSV files: a table with question and answer columns as one FAQ document, any other
    as one catalogue card per row; malformed rows skipped with a note."""
    suffixes = (".csv", ".tsv")

    def _documents(self) -> Iterator[Document]:
        text, damaged = _decode_csv(self.read_bytes(), self.path)
        if not text.strip():
            return
        sample = text[:8192]
        try:
            dialect: type[csv.Dialect] = csv.Sniffer().sniff(sample, delimiters=",;\t|")
        except csv.Error:
            dialect = csv.excel_tab if self.path.suffix.lower() == ".tsv" else csv.excel
        rows, bad = _csv_rows(text, dialect, damaged)
        if not rows and bad:
            raise ParseError(self.path, f"malformed CSV: {summarize(bad)}")
        if not rows:
            return
        documents = list(_rows_documents(self, rows[0], rows[1:]))
        if bad and documents:
            note_file(documents, f"{len(bad)} CSV rows skipped: {summarize(bad)}", lost=True)
        yield from documents


def _decode_csv(data: bytes, path: object) -> tuple[str, set[int]]:
    """The text, and the lines (from 1) that held NUL bytes: a few NULs in a text file are
    damage to those rows (skipped and named), not a sign of binary data."""
    nuls = data.count(b"\x00")
    if not nuls or nuls * 5 > len(data):  # none, or UTF-16/32 or binary: the decoder decides
        return decode(data, path), set()
    lines = data.split(b"\n")
    damaged = {n for n, line in enumerate(lines, 1) if b"\x00" in line}
    if len(damaged) * 2 > len(lines):  # NULs all over: binary data (the decoder says so)
        return decode(data, path), set()
    return decode(data.replace(b"\x00", b""), path), damaged


def _csv_rows(
    text: str, dialect: type[csv.Dialect], damaged: set[int]
) -> tuple[list[list[str]], list[str]]:
    """The good non-empty rows, and a line-numbered reason for each bad one (a row with NUL
    bytes is damaged, not data; the reader goes on after a malformed row)."""
    reader = csv.reader(io.StringIO(text), dialect)
    rows: list[list[str]] = []
    bad: list[str] = []
    while True:
        line = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return rows, bad
        except csv.Error as exc:
            bad.append(f"line {line}: {exc}")
            continue
        if any("\x00" in cell for cell in row) or damaged.intersection(
            range(line, reader.line_num + 1)
        ):
            bad.append(f"line {line}: NUL bytes (a damaged row)")
        elif any(row):
            rows.append(row)


class XlsxLoader(FileLoader):
    """Every sheet: the first non-empty row is the header, each further row a card."""

    suffixes = (".xlsx", ".xlsm")
    extra, needs = "office", ("openpyxl",)

    def _documents(self) -> Iterator[Document]:
        from openpyxl import load_workbook

        data = self.read_bytes()
        if not data.strip():
            return
        check_archive(self.path, data, "XLSX")
        try:
            book = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
        except Exception as exc:
            raise ParseError(
                self.path, f"cannot read it as XLSX ({type(exc).__name__}: {exc}); re-save it"
            ) from exc
        try:
            for sheet in book.worksheets:
                rows = [
                    list(row)
                    for row in sheet.iter_rows(values_only=True)
                    if any(v not in (None, "") for v in row)
                ]
                if rows:
                    name = sheet.title if len(book.worksheets) > 1 else ""
                    yield from _rows_documents(self, rows[0], rows[1:], name)
        finally:
            book.close()


class JsonLoader(FileLoader):
    """JSON or JSON Lines: a list of records (or an object holding one) becomes tickets,
    an FAQ or catalogue cards; any other JSON, ``key: value`` lines."""

    suffixes = (".json", ".jsonl", ".ndjson")

    def _documents(self) -> Iterator[Document]:
        text = decode(self.read_bytes(), self.path)
        if not text.strip():
            return
        bad: list[str] = []
        if self.path.suffix.lower() in (".jsonl", ".ndjson"):
            data, bad = _json_lines(text)
            if not data and bad:
                raise ParseError(self.path, f"no valid JSON line: {summarize(bad)}")
        else:
            try:
                data = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ParseError(
                    self.path, f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
                ) from exc
        documents = list(self._records_documents(data))
        if bad and documents:
            note_file(documents, f"{len(bad)} JSON lines skipped: {summarize(bad)}", lost=True)
        yield from documents

    def _records_documents(self, data: Any) -> Iterator[Document]:
        records = _records(data)
        if records and all(is_ticket(r) for r in records):
            for index, record in enumerate(records, 1):
                document = ticket_document(self.path, self.root, record, index)
                if document is not None:
                    yield document
            return
        if records and all(isinstance(r, dict) for r in records):
            header = list(dict.fromkeys(k for r in records for k in _flatten(r)))
            rows = [[_flatten(r).get(k) for k in header] for r in records]
            yield from _rows_documents(self, header, rows)
            return
        lines = [f"{k}: {v}" for k, v in _flatten(data).items() if v not in (None, "")]
        body = "\n".join(lines) + "\n" if lines else ""
        yield Document(page_content=body, metadata=file_metadata(self.path, self.root, body))


def _json_lines(text: str) -> tuple[list[object], list[str]]:
    """The records of the good lines, and a reason with its real line number for each bad
    one (numbered by ``\\n`` as editors do: ``splitlines`` would also break on U+2028)."""
    records: list[object] = []
    bad: list[str] = []
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            bad.append(f"line {number}: {exc.msg} (column {exc.colno})")
    return records, bad


def _records(data: Any) -> list[Any]:
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        for value in data.values():
            if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
                return value
    return []


def _flatten(value: object, prefix: str = "") -> dict[str, object]:
    if isinstance(value, dict):
        out: dict[str, object] = {}
        for key, item in value.items():
            out.update(_flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    if isinstance(value, list):
        if all(not isinstance(v, dict | list) for v in value):
            return {prefix or "value": ", ".join(str(v) for v in value)}
        out = {}
        for i, item in enumerate(value):
            out.update(_flatten(item, f"{prefix}[{i}]"))
        return out
    return {prefix or "value": value}
