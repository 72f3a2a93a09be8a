"""Text that is almost right is ingested, not rejected: broken UTF-8 bytes and NULs become
U+FFFD (one code point per byte: offsets into the decoded text stay exact) with a note naming
their byte offsets; a declared charset that decodes to mojibake is replaced by the one that
fits, with a note; real binary data is still refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragingest.errors import ParseError
from ragingest.loaders import loader_for
from ragingest.loaders.formats.repair import better_charset
from ragingest.loaders.notes import file_notes
from ragingest.splitters.factory import SplitSettings, base_splitter
from tests.splitting import split_file

GOOD = "# Заголовок\n\nТекст абзаца один.\n\n".encode()
RUSSIAN = "Добрый день! Альбом выдаётся на три дня, продление возможно один раз."


def load(path: Path):
    documents = list(loader_for(path, path.parent).lazy_load())
    return documents, file_notes(documents)[0]


@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
def test_broken_bytes_and_a_nul_are_replaced_and_named_by_byte_offset(tmp_path, bom):
    data = bom + GOOD + b"bad \xff\xfe\xfd bytes and a NUL \x00 here.\n"
    path = tmp_path / "damaged.md"
    path.write_bytes(data)
    documents, notes = load(path)
    bad, nul = data.index(b"\xff"), data.index(b"\x00")
    assert notes == [
        f"3 invalid UTF-8 bytes at byte offsets {bad}, {bad + 1}, {bad + 2}: replaced with U+FFFD",
        f"1 NUL byte at byte offset {nul}: replaced with U+FFFD",
    ]
    assert documents[0].page_content.endswith(
        "bad \ufffd\ufffd\ufffd bytes and a NUL \ufffd here.\n"
    )


def test_offsets_stay_exact_against_the_decoded_text(tmp_path):
    data = GOOD + b"\xff " * 3 + "Второй абзац с \x00 нулём.\n".encode()
    path = tmp_path / "damaged.md"
    path.write_bytes(data)
    settings = SplitSettings()
    splitter = base_splitter(settings, model="intfloat/multilingual-e5-small")
    chunks = split_file(path, tmp_path, splitter, settings=settings)
    decoded = data.decode("utf-8", "replace").replace("\x00", "\ufffd")
    assert chunks and all(
        decoded[r.metadata["start_index"] : r.metadata["end_index"]] == r.text for r in chunks
    )
    assert len(chunks.notes) == 2 and chunks.lost is False


def test_binary_data_is_still_refused(tmp_path):
    path = tmp_path / "binary.txt"
    path.write_bytes(bytes(range(256)) * 64)
    with pytest.raises(ParseError, match="not a text file"):
        load(path)


def test_a_lying_html_charset_is_detected_and_noted(tmp_path):
    path = tmp_path / "page.html"
    path.write_bytes(
        b'<html><head><meta charset="windows-1252"><title>T</title></head><body><p>'
        + RUSSIAN.encode()
        + b"</p></body></html>"
    )
    documents, notes = load(path)
    assert RUSSIAN in documents[0].page_content
    assert notes == [
        "the page declares charset windows-1252, but its bytes are utf-8: decoded as utf-8 "
        "(detected)"
    ]


def test_a_mail_charset_that_decodes_to_mojibake_is_detected_and_noted(tmp_path):
    path = tmp_path / "mail.eml"
    head = b"From: a@example.org\nTo: b@example.org\nSubject: test\n"
    head += b"Content-Type: text/plain; charset=iso-8859-1\nContent-Transfer-Encoding: 8bit\n\n"
    path.write_bytes(head + RUSSIAN.encode("cp1251") + b"\n")
    documents, notes = load(path)
    assert documents[0].page_content == f"# test\n\n{RUSSIAN}\n"
    assert notes == [
        "the text/plain part declares charset iso-8859-1, but its bytes are cp1251: decoded as "
        "cp1251 (detected)"
    ]


def test_an_honest_charset_is_kept():
    assert better_charset("Café crème brûlée à la carte.".encode("latin-1"), "latin-1") is None
    assert better_charset(RUSSIAN.encode("cp1251"), "windows-1251") is None
    assert better_charset(b"plain ascii", "latin-1") is None
    assert better_charset(RUSSIAN.encode(), "utf-8") is None
