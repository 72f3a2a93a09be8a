"""ZIP containers are checked by what they really inflate to, not by what their headers say:
an EPUB or ODT that lies about its sizes is refused with the reason before pandoc starts; the
ratio bound holds for small archives too (past ``RATIO_FLOOR``); an honest office file passes."""

from __future__ import annotations

import io
import struct
import zipfile
from pathlib import Path

import pytest

from ragingest.errors import FileTooLargeError
from ragingest.loaders import loader_for
from ragingest.loaders.formats import partition
from ragingest.loaders.formats.archives import RATIO_FLOOR, check_archive, inflated_size
from tests import docbuilders as b

XHTML = b"<html><body><p>" + b"a" * 64 + b"</p></body></html>"


def lying_zip(members: dict[str, bytes], declared: int) -> bytes:
    """A ZIP (deflated) whose headers, local and central, declare every member ``declared``
    bytes long; the CRC stays that of the real bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, body in members.items():
            archive.writestr(name, body)
    data = bytearray(buffer.getvalue())
    infos = zipfile.ZipFile(io.BytesIO(bytes(data))).infolist()
    for info in infos:
        struct.pack_into("<I", data, info.header_offset + 22, declared)  # local header
    central = data.find(b"PK\x01\x02")
    while central != -1:
        struct.pack_into("<I", data, central + 24, declared)  # central directory entry
        central = data.find(b"PK\x01\x02", central + 4)
    return bytes(data)


@pytest.fixture
def no_pandoc(monkeypatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("the parser (pandoc) was started")

    monkeypatch.setattr(partition, "partition", refuse)


@pytest.mark.parametrize(
    ("name", "mimetype"),
    [
        ("book.epub", b"application/epub+zip"),
        ("memo.odt", b"application/vnd.oasis.opendocument.text"),
    ],
)
def test_a_container_that_lies_about_its_sizes_is_refused_before_parsing(
    tmp_path, no_pandoc, name, mimetype
):
    real = 8 * RATIO_FLOOR  # deflates to a few KB: over 200x its size
    data = lying_zip({"mimetype": mimetype, "content.xhtml": XHTML + b" " * real}, 4096)
    assert sum(i.file_size for i in zipfile.ZipFile(io.BytesIO(data)).infolist()) == 8192
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(FileTooLargeError) as refused:
        list(loader_for(path, tmp_path).lazy_load())
    assert "really unpacks to more than" in refused.value.reason
    assert "(declared: 8 KB)" in refused.value.reason and "zip bomb" in refused.value.reason


def test_the_ratio_bound_holds_under_16_mib(tmp_path, no_pandoc):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("content.xhtml", XHTML + b" " * (3 * RATIO_FLOOR))  # honest headers
    path = tmp_path / "small.epub"
    path.write_bytes(buffer.getvalue())
    with pytest.raises(FileTooLargeError, match=r"unpacks to 3\.0 MiB \(\d+x its size\)"):
        list(loader_for(path, tmp_path).lazy_load())


def test_inflated_size_counts_real_bytes_and_stops_at_the_cap():
    data = lying_zip({"a.xml": b"x" * 100_000}, 10)
    (info,) = zipfile.ZipFile(io.BytesIO(data)).infolist()
    assert info.file_size == 10
    assert inflated_size(data, info, 10**9) == 100_000
    assert 1000 < inflated_size(data, info, 1000) <= 1000 + 16 * 64 * 2**10


def test_honest_office_files_pass(tmp_path):
    for path in (b.build_docx(tmp_path / "a.docx"), b.build_pandoc(tmp_path / "b.odt", "odt")):
        check_archive(path, Path(path).read_bytes(), path.suffix)
