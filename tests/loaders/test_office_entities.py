"""DOCX and PPTX keep the text after an entity reference (python-docx/-pptx stopped at it):
an internal plain-text entity becomes its value, an external one is never read (no file, no
network), nested or huge ones are not expanded."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import docx
import pytest
from pptx import Presentation
from pptx.util import Inches

from ragingest.loaders import loader_for
from ragingest.loaders.formats.office_xml import flatten_entities, without_entities

SENTENCE = "Before MARK after the reference."


def inject(data: bytes, part: str, declaration: str, reference: str) -> bytes:
    """The package with ``MARK`` in ``part`` replaced by ``reference`` under a DOCTYPE."""
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for info in source.infolist():
            body = source.read(info)
            if info.filename == part:
                body = body.replace(b"MARK", reference.encode())
                head, _, rest = body.partition(b"?>")
                body = head + b"?>" + declaration.encode() + rest
            archive.writestr(info, body)
    return out.getvalue()


def docx_bytes() -> bytes:
    document = docx.Document()
    document.add_paragraph(SENTENCE)
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def pptx_bytes() -> bytes:
    presentation = Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[6])
    slide.shapes.add_textbox(Inches(1), Inches(1), Inches(6), Inches(1)).text_frame.text = SENTENCE
    buffer = io.BytesIO()
    presentation.save(buffer)
    return buffer.getvalue()


CASES = {
    "internal": ('<!DOCTYPE x [<!ENTITY co "Ромашка">]>', "&co;", "Before Ромашка after"),
    "external": ('<!DOCTYPE x [<!ENTITY xx SYSTEM "file:///etc/passwd">]>', "&xx;", "Before after"),
    "nested": ('<!DOCTYPE x [<!ENTITY a "ha"><!ENTITY b "&a;&a;&a;">]>', "&b;", "Before after"),
}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize(
    ("suffix", "build", "part"),
    [(".docx", docx_bytes, "word/document.xml"), (".pptx", pptx_bytes, "ppt/slides/slide1.xml")],
)
def test_the_text_after_an_entity_reference_is_kept(tmp_path: Path, case, suffix, build, part):
    declaration, reference, expected = CASES[case]
    path = tmp_path / f"doc{suffix}"
    path.write_bytes(inject(build(), part, declaration, reference))
    (document,) = loader_for(path, tmp_path).lazy_load()
    text = " ".join(document.page_content.split())
    assert f"{expected} the reference." in text
    assert "root:" not in text


def test_files_without_a_doctype_pass_through_untouched():
    data = docx_bytes()
    assert without_entities(data) is data
    assert flatten_entities(b"<a>broken") is None
