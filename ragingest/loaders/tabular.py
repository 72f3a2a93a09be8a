"""Tables as data: CSV/TSV (stdlib ``csv``), XLSX (openpyxl), JSON/JSONL (stdlib ``json``).

Read directly rather than with unstructured, which turns a sheet into one HTML table: a
catalogue needs a card per row and typed cells (numbers stay numbers for metadata filters).
What each row or record becomes — catalogue card, FAQ pair, ticket — is in ``records``.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from typing import Any

from langchain_core.documents import Document

from ragingest.errors import ParseError
from ragingest.loaders.base import FileLoader, file_metadata, read_bytes
from ragingest.loaders.records import (
    catalogue_documents,
    faq_document,
    is_faq,
    is_ticket,
    ticket_document,
)
from ragingest.loaders.rich import check_archive
from ragingest.loaders.text import decode

csv.field_size_limit(16 * 2**20)


def _rows_documents(
    loader: FileLoader, header: list[Any], rows: list[list[Any]], sheet: str = ""
) -> Iterator[Document]:
    header = [str(h) if h is not None else "" for h in header]
    if is_faq(header):
        yield faq_document(loader.path, loader.root, header, rows)
    else:
        yield from catalogue_documents(loader.path, loader.root, header, rows, sheet)


class CsvLoader(FileLoader):
    suffixes = (".csv", ".tsv")

    def _documents(self) -> Iterator[Document]:
        text = decode(read_bytes(self.path, self.max_bytes), self.path)
        if not text.strip():
            return
        sample = text[:8192]
        try:
            dialect: Any = csv.Sniffer().sniff(sample, delimiters=",;\t|")
        except csv.Error:
            dialect = csv.excel_tab if self.path.suffix.lower() == ".tsv" else csv.excel
        try:
            rows = [row for row in csv.reader(io.StringIO(text), dialect) if any(row)]
        except csv.Error as exc:
            raise ParseError(self.path, f"malformed CSV: {exc}") from exc
        if not rows:
            return
        yield from _rows_documents(self, rows[0], rows[1:])


class XlsxLoader(FileLoader):
    """Every sheet: the first non-empty row is the header, each further row a card."""

    suffixes = (".xlsx", ".xlsm")

    def _documents(self) -> Iterator[Document]:
        from openpyxl import load_workbook

        data = read_bytes(self.path, self.max_bytes)
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
        text = decode(read_bytes(self.path, self.max_bytes), self.path)
        if not text.strip():
            return
        try:
            if self.path.suffix.lower() in (".jsonl", ".ndjson"):
                data: Any = [json.loads(line) for line in text.splitlines() if line.strip()]
            else:
                data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ParseError(
                self.path, f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
            ) from exc
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


def _records(data: Any) -> list[Any]:
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        for value in data.values():
            if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
                return value
    return []


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
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
