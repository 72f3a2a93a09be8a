"""Office documents: DOCX and PPTX with python-docx/python-pptx; ODT and RTF with unstructured.

DOCX and PPTX are read directly: unstructured maps both the «Title» style and «Heading 1» to
the same depth, drops DOCX page breaks, and classifies short PPTX bullets as titles. python-docx
gives heading styles (and outline levels), list levels, tables in document order and explicit
or rendered page breaks; python-pptx gives slide titles, bullet levels and tables per slide
(a slide is a page). ODT and RTF go through unstructured (which converts them with pandoc):
their heading levels come through as ``category_depth``.
"""

from __future__ import annotations

import io
import re
from typing import TYPE_CHECKING, Any

from ragingest.loaders.formats.office_xml import without_entities
from ragingest.loaders.formats.partition import PartitionedArchiveLoader, element_blocks, partition
from ragingest.loaders.formats.rich import Parsed, RichLoader
from ragingest.loaders.markdown.blocks import (
    FOOTER,
    HEADER,
    HEADING,
    LIST_ITEM,
    PAGE_NUMBER,
    PARAGRAPH,
    TABLE,
    Block,
    clean_inline,
)

if TYPE_CHECKING:
    from docx.oxml.xmlchemy import BaseOxmlElement
    from docx.table import _Cell, _Row
    from docx.text.paragraph import Paragraph
    from pptx.text.text import _Paragraph

_HEADING_STYLE = re.compile(r"^(?:heading|заголовок)\s*(\d)$", re.IGNORECASE)
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def _core_metadata(props: object) -> dict[str, str]:
    out: dict[str, str] = {}
    title = clean_inline(getattr(props, "title", "") or "")
    author = clean_inline(getattr(props, "author", "") or "")
    when = getattr(props, "modified", None) or getattr(props, "created", None)
    if title:
        out["title"] = title
    if author:
        out["author"] = author
    if when is not None:
        out["doc_date"] = when.isoformat(timespec="seconds")
    return out


class DocxLoader(RichLoader):
    """DOCX files (``python-docx``): headings, paragraphs, lists and tables in document order."""
    suffixes = (".docx",)
    extra, needs = "office", ("docx", "lxml")
    format_name = "DOCX"
    archive = True

    def _parse(self, data: bytes) -> Parsed:
        import docx
        from docx.table import Table
        from docx.text.paragraph import Paragraph

        document = docx.Document(io.BytesIO(without_entities(data)))
        blocks: list[Block] = []
        for section in document.sections:
            for part, kind in ((section.header, HEADER), (section.footer, FOOTER)):
                try:
                    if part.is_linked_to_previous and blocks:
                        continue
                    for paragraph in part.paragraphs:
                        if paragraph.text.strip():
                            blocks.append(Block(kind, paragraph.text))
                except Exception:
                    continue
        body: list[Block] = []
        page = 1
        breaks = False
        for child in document.element.body.iterchildren():
            if child.tag == f"{_W}p":
                paragraph = Paragraph(child, document)
                if _page_break_before(paragraph) and body:
                    page += 1
                    breaks = True
                block = _paragraph_block(paragraph, page)
                if block is not None:
                    body.append(block)
                if _page_breaks_inside(child):
                    page += _page_breaks_inside(child)
                    breaks = True
            elif child.tag == f"{_W}tbl":
                table = Table(child, document)
                rows = [[cell.text for cell in _unique_cells(row)] for row in table.rows]
                body.append(Block(TABLE, rows=rows, page=page))
        _shift_headings(body)
        if not breaks:
            for block in body:
                block.page = None
        return Parsed(
            blocks + body, page if breaks else 0, _core_metadata(document.core_properties)
        )


def _unique_cells(row: _Row) -> list[_Cell]:
    cells: list[_Cell] = []
    seen: set[int] = set()
    for cell in row.cells:
        if id(cell._tc) not in seen:
            seen.add(id(cell._tc))
            cells.append(cell)
    return cells


def _page_break_before(paragraph: Paragraph) -> bool:
    try:
        return bool(paragraph.paragraph_format.page_break_before)
    except Exception:
        return False


def _page_breaks_inside(element: BaseOxmlElement) -> int:
    explicit = sum(1 for br in element.iter(f"{_W}br") if br.get(f"{_W}type") == "page")
    rendered = sum(1 for _ in element.iter(f"{_W}lastRenderedPageBreak"))
    return max(explicit, rendered)


def _paragraph_block(paragraph: Any, page: int) -> Block | None:
    text = paragraph.text
    if not text.strip():
        return None
    style = paragraph.style
    name = (style.name if style is not None else "") or ""
    if name.lower() == "title":
        return Block(HEADING, text, level=0, page=page)  # level fixed by _shift_headings
    match = _HEADING_STYLE.match(name.strip())
    level = int(match.group(1)) if match else _outline_level(paragraph)
    if level:
        return Block(HEADING, text, level=level, page=page)
    p_pr = paragraph._p.pPr
    numbered = p_pr is not None and p_pr.numPr is not None
    if numbered or name.lower().startswith("list"):
        depth = 0
        if numbered and p_pr.numPr.ilvl is not None:
            depth = int(p_pr.numPr.ilvl.val or 0)
        return Block(LIST_ITEM, text, level=depth, page=page, ordered="number" in name.lower())
    if _all_bold(paragraph) and len(text) <= 100 and not re.search(r"[.:;,]$", text.strip()):
        return Block(HEADING, text, level=-1, page=page)  # bold line: a manual heading
    return Block(PARAGRAPH, text, page=page)


def _outline_level(paragraph: Paragraph) -> int:
    p_pr = paragraph._p.pPr
    if p_pr is None:
        return 0
    node = p_pr.find(f"{_W}outlineLvl")
    if node is None:
        return 0
    value = node.get(f"{_W}val")
    return int(value) + 1 if value and value.isdigit() and int(value) < 9 else 0


def _all_bold(paragraph: Paragraph) -> bool:
    runs = [run for run in paragraph.runs if run.text.strip()]
    return bool(runs) and all(run.bold for run in runs)


def _shift_headings(blocks: list[Block]) -> None:
    """«Title» is H1; heading styles go one level down when a Title exists. Bold-only lines
    count as headings only in documents with no heading styles, one level below the title."""
    has_title = any(b.kind == HEADING and b.level == 0 for b in blocks)
    styled = any(b.kind == HEADING and b.level > 0 for b in blocks)
    for block in blocks:
        if block.kind != HEADING:
            continue
        if block.level == 0:
            block.level = 1
        elif block.level == -1:
            if styled:
                block.kind = PARAGRAPH
            else:
                block.level = 2
        elif has_title:
            block.level = min(6, block.level + 1)


class PptxLoader(RichLoader):
    """Each slide is a page: its title an H2 (the first slide's an H1), text frames as
    paragraphs or bullet lists, tables whole, footers and slide numbers dropped."""

    suffixes = (".pptx",)
    extra, needs = "office", ("pptx", "lxml")
    format_name = "PPTX"
    archive = True

    def _parse(self, data: bytes) -> Parsed:
        from pptx import Presentation

        presentation = Presentation(io.BytesIO(without_entities(data)))
        blocks: list[Block] = []
        slides = list(presentation.slides)
        for number, slide in enumerate(slides, 1):
            title_shape = slide.shapes.title
            if title_shape is not None and title_shape.has_text_frame:
                title = clean_inline(title_shape.text_frame.text)
                if title:
                    level = 1 if number == 1 else 2
                    blocks.append(Block(HEADING, title, level=level, page=number))
            title_id = title_shape.shape_id if title_shape is not None else None
            shapes = sorted(
                (s for s in slide.shapes if s.shape_id != title_id),
                key=lambda s: (s.top or 0, s.left or 0),
            )
            for shape in shapes:
                blocks.extend(_shape_blocks(shape, number))
            if slide.has_notes_slide:
                notes = slide.notes_slide.notes_text_frame
                if notes is not None and notes.text.strip():
                    blocks.append(Block(PARAGRAPH, notes.text, page=number))
        return Parsed(blocks, len(slides), _core_metadata(presentation.core_properties))


def _shape_blocks(shape: Any, page: int) -> list[Block]:
    from pptx.enum.shapes import MSO_SHAPE_TYPE, PP_PLACEHOLDER

    if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
        return [b for child in shape.shapes for b in _shape_blocks(child, page)]
    if getattr(shape, "has_table", False) and shape.has_table:
        rows = [[cell.text for cell in row.cells] for row in shape.table.rows]
        return [Block(TABLE, rows=rows, page=page)]
    if not getattr(shape, "has_text_frame", False) or not shape.has_text_frame:
        return []
    if shape.is_placeholder:
        kind = shape.placeholder_format.type
        if kind == PP_PLACEHOLDER.SLIDE_NUMBER:
            return [Block(PAGE_NUMBER, shape.text_frame.text, page=page)]
        if kind in (PP_PLACEHOLDER.FOOTER, PP_PLACEHOLDER.DATE, PP_PLACEHOLDER.HEADER):
            return [Block(FOOTER, shape.text_frame.text, page=page)]
    paragraphs = [p for p in shape.text_frame.paragraphs if clean_inline(_runs_text(p))]
    if len(paragraphs) == 1 and paragraphs[0].level == 0:
        return [Block(PARAGRAPH, _runs_text(paragraphs[0]), page=page)]
    return [Block(LIST_ITEM, _runs_text(p), level=p.level, page=page) for p in paragraphs]


def _runs_text(paragraph: _Paragraph) -> str:
    return "".join(run.text for run in paragraph.runs) or paragraph.text


class OdtLoader(PartitionedArchiveLoader):
    """ODT files (unstructured's partitioner)."""
    suffixes = (".odt",)
    extra, needs = "office", ("unstructured", "pypandoc")
    format_name = "ODT"
    kind = "odt"
    text_member = r"content\.xml$"


class RtfLoader(RichLoader):
    """RTF files (unstructured's partitioner, through pandoc)."""
    suffixes = (".rtf",)
    extra, needs = "office", ("unstructured", "pypandoc")
    format_name = "RTF"

    def _parse(self, data: bytes) -> Parsed:
        if not data.lstrip().startswith(b"{\\rtf"):
            raise ValueError("no {\\rtf header")
        elements = partition("rtf", file=io.BytesIO(data))
        return Parsed(element_blocks(elements))

    def has_text(self, data: bytes) -> bool:
        """Whether the RTF bytes hold readable text outside their font, colour, style and info
        tables."""
        tables = rb"\{\\\*?\\(?:fonttbl|colortbl|stylesheet|info)[^{}]*(?:\{[^{}]*\}[^{}]*)*\}"
        body = re.sub(tables, b" ", data)
        escaped = len(re.findall(rb"\\u-?\d+", body))  # non-ASCII letters as \uNNNN
        body = re.sub(rb"\\[a-z]+-?\d* ?|[{}]", b" ", body)
        return escaped >= 15 or len(re.findall(rb"[A-Za-z\x80-\xff]{3,}", body)) >= 5
