"""Hostile content inside good-looking files: every good line kept, every bad one named by
its real line number; a lying mail charset detected, not turned into U+FFFD; HTML nested
past the parser's depth limit keeps all its text and says so; only regular files read."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from ragingest.errors import ParseError, UnreadableFileError
from ragingest.loaders import loader_for
from ragingest.loaders.base import read_bytes
from ragingest.loaders.formats.html_depth import nesting_depth
from ragingest.loaders.notes import file_notes


def load(path: Path):
    documents = list(loader_for(path, path.parent).lazy_load())
    return documents, *file_notes(documents)


def test_jsonl_keeps_good_lines_and_names_each_bad_one(tmp_path):
    path = tmp_path / "records.jsonl"
    lines = [
        '{"name": "Стол", "цена": 4990}',
        '{"name": "Стул", "цена": ',  # line 2: cut short
        "",
        '{"name": "Шкаф", "цена": 12000}',
        "not json at all",  # line 5
        '{"name": "Полка", "цена": 800}',
    ]
    path.write_text("\n".join(lines) + "\n", "utf-8")
    documents, notes, lost = load(path)
    assert [d.metadata["title"] for d in documents] == ["Стол", "Шкаф", "Полка"]
    assert [d.metadata["price"] for d in documents] == [4990, 12000, 800]
    assert notes == [
        "2 JSON lines skipped: line 2: Expecting value (column 26); "
        "line 5: Expecting value (column 1)"
    ]
    assert lost is True


def test_jsonl_with_no_good_line_fails_with_the_line_numbers(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('\n\n{"a": \n', "utf-8")
    with pytest.raises(ParseError, match=r"no valid JSON line: line 3: Expecting value"):
        load(path)


def test_csv_rows_with_nul_bytes_are_named_and_the_others_kept(tmp_path):
    path = tmp_path / "catalogue.csv"
    path.write_bytes(
        "название,цена\nСтол,4990\nСту\x00л,1200\nШкаф,12000\n\x00\x00\x00,0\n".encode()
    )
    documents, notes, lost = load(path)
    assert [d.metadata["title"] for d in documents] == ["Стол", "Шкаф"]
    assert notes == [
        "2 CSV rows skipped: line 3: NUL bytes (a damaged row); line 5: NUL bytes (a damaged row)"
    ]
    assert lost is True


def test_mail_part_with_a_lying_charset_is_decoded_by_detection(tmp_path):
    body = (
        "Добрый день! Альбом выдаётся на три дня, продление возможно один раз. "
        "Просьба вернуть его в читальный зал до закрытия."
    )
    path = tmp_path / "lying.eml"
    path.write_bytes(
        b"From: a@example.org\nTo: b@example.org\nSubject: test\n"
        b"Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: 8bit\n\n"
        + body.encode("cp1251")
        + b"\n"
    )
    documents, notes, lost = load(path)
    assert documents[0].page_content == f"# test\n\n{body}\n"
    assert "\ufffd" not in documents[0].page_content
    assert len(notes) == 1 and lost is False
    assert notes[0].startswith("the text/plain part: bytes not valid utf-8 as declared (at byte 0)")
    assert notes[0].endswith("(detected)")


def test_html_nested_past_the_parser_limit_keeps_all_text_with_a_note(tmp_path):
    path = tmp_path / "deep.html"
    markup = "<p>TOP</p>" + "<div>" * 260 + "<p>DEEP</p>" + "</div>" * 260 + "<p>END</p>"
    path.write_text(f"<html><body>{markup}</body></html>", "utf-8")
    assert nesting_depth(markup) == 260
    documents, notes, lost = load(path)
    assert documents[0].page_content == "TOP\n\nDEEP\n\nEND\n"
    assert notes == [
        "HTML nested 262 levels deep (the parser stops at 255): container tags flattened so "
        "all text is kept; paragraph breaks between them may be lost"
    ]
    assert lost is False


def test_html_nested_deep_in_structure_tags_is_read_as_text(tmp_path):
    path = tmp_path / "lists.html"
    markup = "<p>TOP</p>" + "<ul><li>" * 300 + "DEEP" + "</li></ul>" * 300 + "<p>END</p>"
    path.write_text(markup, "utf-8")
    documents, notes, _lost = load(path)
    assert documents[0].page_content == "TOP\n\nDEEP\n\nEND\n"
    assert notes[0].endswith("read as plain text so all text is kept; headings, lists and "
                             "tables of the page are lost")  # fmt: skip


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "a.txt"
    os.mkfifo(fifo)
    with pytest.raises(UnreadableFileError, match="a FIFO \\(named pipe\\), not a regular file"):
        read_bytes(fifo)


def test_a_fifo_swapped_in_after_the_check_does_not_block(tmp_path, monkeypatch):
    """The stat said regular, then a FIFO took the name: the non-blocking open and the
    fstat on the descriptor refuse it instead of waiting for a writer forever."""
    fifo = tmp_path / "b.txt"
    os.mkfifo(fifo)
    real_stat = Path.stat
    regular = os.stat(__file__)
    monkeypatch.setattr(
        Path, "stat", lambda self, **kw: regular if self == fifo else real_stat(self)
    )
    outcome: list[BaseException] = []

    def read() -> None:
        try:
            read_bytes(fifo)
        except BaseException as exc:
            outcome.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(30)
    assert not reader.is_alive(), "read_bytes blocked on a FIFO"
    assert isinstance(outcome[0], UnreadableFileError)
    assert "a FIFO (named pipe), not a regular file" in outcome[0].reason


def test_the_file_stamp_refuses_a_fifo_instead_of_blocking_on_its_hash(tmp_path):
    from ragingest.pipeline.state import FileStamp

    fifo = tmp_path / "c.txt"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="a FIFO \\(named pipe\\), not a regular file"):
        FileStamp.of(fifo)
