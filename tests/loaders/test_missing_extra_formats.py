"""A file whose format needs an extra that is not installed fails by name with the extra's
``pip install 'ragingest[...]'`` line (``MissingExtraFileError``, kind ``missing_extra``); a
file the installed parts read still loads. One case per format family, each in a subprocess in
which the extra's modules can't be imported (``tests.extras``)."""

from __future__ import annotations

from email.message import EmailMessage
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES
from tests.extras import missing_env, run_python

LOAD = """
import sys
from ragingest.errors import MissingExtraFileError
from ragingest.loaders import loader_for
try:
    documents = loader_for(sys.argv[1]).load()
except MissingExtraFileError as exc:
    print("MISSING", exc.kind, exc, sep="|")
else:
    print("LOADED", len(documents), sep="|")
"""


def _load(tmp_path: Path, path: Path, missing: tuple[str, ...]) -> list[str]:
    done = run_python(missing_env(tmp_path / "site", missing), LOAD, str(path))
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1].split("|")


def _file(tmp_path: Path, name: str) -> Path:
    """A file of ``name``'s format: the example when there is one; else bytes the check never
    reads (it comes before the parser)."""
    example = EXAMPLES / name
    if example.is_file():
        return example
    path = tmp_path / name
    path.write_bytes(b"PK\x03\x04 not read: the extra is checked first")
    return path


@pytest.mark.parametrize(
    ("name", "missing", "extra"),
    [
        ("regulation_service.pdf", ("pypdf",), "pdf"),
        ("return_policy.docx", ("docx",), "office"),
        ("slides.pptx", ("pptx",), "office"),
        ("table.xlsx", ("openpyxl",), "office"),
        ("memo.odt", ("pypandoc",), "office"),
        ("memo.rtf", ("unstructured",), "office"),
        ("book.epub", ("unstructured",), "office"),
        ("help_account.html", ("unstructured",), "html"),
        ("scan.png", ("PIL",), "ocr"),
    ],
)
def test_a_format_without_its_extra_fails_by_name_with_the_install_line(
    tmp_path, name, missing, extra
):
    path = _file(tmp_path, name)
    status, kind, message = _load(tmp_path, path, missing)
    assert (status, kind) == ("MISSING", "missing_extra")
    suffix = path.suffix
    assert message == (
        f"{path}: reading {suffix} files needs the [{extra}] extra: "
        f"pip install 'ragingest[{extra}]' ({missing[0]} is not installed)"
    )


def _eml(path: Path, subtype: str) -> Path:
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = "a@example.ru", "b@example.ru", "Склад"
    body = "Синхронизация склада восстановлена, остатки совпадают с учётом."
    if subtype == "html":
        message.set_content(f"<html><body><p>{body}</p></body></html>", subtype="html")
    else:
        message.set_content(body)
    path.write_bytes(message.as_bytes())
    return path


def test_mail_reads_a_plain_body_without_the_mail_extra_and_names_it_for_an_html_one(tmp_path):
    missing = ("unstructured", "bs4")
    assert _load(tmp_path, _eml(tmp_path / "plain.eml", "plain"), missing) == ["LOADED", "1"]
    html = _eml(tmp_path / "html.eml", "html")
    status, kind, message = _load(tmp_path, html, missing)
    assert (status, kind) == ("MISSING", "missing_extra")
    assert message == (
        f"{html}: reading an e-mail's HTML body needs the [mail] extra: "
        "pip install 'ragingest[mail]' (unstructured is not installed)"
    )


def test_a_scanned_pdf_without_the_ocr_extra_names_ocr(tmp_path):
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(width=595, height=842)  # no text layer: a page OCR would read
    path = tmp_path / "scan.pdf"
    with path.open("wb") as handle:
        writer.write(handle)
    status, kind, message = _load(tmp_path, path, ("pypdfium2",))
    assert (status, kind) == ("MISSING", "missing_extra")
    assert message == (
        f"{path}: reading scanned pages (OCR) needs the [ocr] extra: "
        "pip install 'ragingest[ocr]' (pypdfium2 is not installed)"
    )


def test_with_the_extras_installed_the_same_files_load(tmp_path):
    assert _load(tmp_path, EXAMPLES / "regulation_service.pdf", ())[0] == "LOADED"
