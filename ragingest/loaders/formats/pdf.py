"""PDF: text with pypdf, headings from the outline, else from font sizes (``pdf_headings``).

pypdf directly, not unstructured: unstructured's PDF support needs its ``pdf`` extra (which
pulls torchvision and a CUDA torch), gives no outline, and without its spaCy model returns
zero elements with no error. pypdf gives the outline, per-line font sizes and page numbers.

Contract: page breaks are no chunk boundaries (a paragraph running onto the next page stays
one paragraph, and the page map marks where the new page starts inside it); running
headers/footers, page numbers and the table of contents go through ``cleaning``; an encrypted
PDF is opened with the empty password or refused with a clear reason; a truncated or
non-PDF file raises ``ParseError``. A page without a text layer, or whose text layer is
garbage, is read by OCR (``loaders.scans.ocr``, ``loaders.scans.scan``; ``--ocr never`` turns it
off, then a PDF with no text at all raises ``ParseError``): its lines go through the same headings,
paragraphs and cleaning (a line OCR is not sure of is no title or heading:
``scan.sure_heading``), and the document gets ``ocr``, the box map that gives each chunk its
``page_boxes`` and ``ocr_confidence``, and the pages OCR turned (``page_rotations``).
"""

from __future__ import annotations

import io
from typing import Any

from langchain_core.documents import Document

from ragingest.errors import ParseError
from ragingest.loaders.base import require_extra
from ragingest.loaders.cleaning.rules import clean_blocks
from ragingest.loaders.formats.pdf_headings import title_line, with_font_sizes, with_outline
from ragingest.loaders.formats.pdf_lines import Line, OutlineEntry, page_lines, read_outline
from ragingest.loaders.formats.rich import Parsed, RichLoader
from ragingest.loaders.markdown.blocks import clean_inline
from ragingest.loaders.notes import add_note
from ragingest.loaders.scans.ocr import check_page_count, ocr_pages
from ragingest.loaders.scans.page_images import large_page_notes, large_pages
from ragingest.loaders.scans.scan import (
    ScanLine,
    box_map,
    join_heading_lines,
    pages_to_ocr,
    render_pdf_pages,
    scan_lines,
    unify_sizes,
)
from ragingest.schema import BOX_MAP_HINT, SCAN_PAGES_HINT


class PdfLoader(RichLoader):
    """PDF files (``pypdf``): text per page, headings from the outline or font sizes, page
    furniture cleaned."""

    suffixes: tuple[str, ...] = (".pdf",)
    extra, needs = "pdf", ("pypdf",)
    format_name = "PDF"

    def _parse(self, data: bytes) -> Parsed:
        from pypdf import PdfReader
        from pypdf.errors import DependencyError

        if b"%PDF-" not in data[:1024]:
            raise ParseError(self.path, "not a PDF (no %PDF- header): wrong extension or damaged")
        if b"%%EOF" not in data[-4096:]:
            raise ParseError(
                self.path,
                "the PDF is truncated (no %%EOF end marker): download or export it again",
            )
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            try:
                opened = reader.decrypt("")
            except DependencyError as exc:
                raise ParseError(self.path, f"encrypted PDF needs a crypto library: {exc}") from exc
            if not opened:
                raise ParseError(
                    self.path,
                    "the PDF is encrypted with a password: save a copy without it "
                    "(e.g. qpdf --decrypt --password=PASSWORD in.pdf out.pdf) and ingest that",
                )
        pages = len(reader.pages)
        by_page = [page_lines(page, number) for number, page in enumerate(reader.pages, 1)]
        self._notes: list[str] = []
        self._rotations: dict[int, int] = {}
        by_page = self._with_ocr(data, by_page)
        lines = [line for page in by_page for line in page]
        if not lines:
            raise ParseError(
                self.path,
                f"no extractable text on its {pages} page(s) (a scan?): read it with OCR "
                "(--ocr auto, the default, with Tesseract installed) or run OCR on it first "
                "(e.g. ocrmypdf in.pdf out.pdf) and ingest the result",
            )
        metadata = _metadata(reader)
        outline = read_outline(reader)
        return self._finish(lines, pages, metadata, outline)

    def _with_ocr(self, data: bytes, by_page: list[list[Line]]) -> list[list[Line]]:
        """``by_page`` with the pages that need OCR (all of them with ``--ocr always``; else
        those without text or with a garbage text layer) replaced by what OCR read."""
        settings = self.cleaning.ocr
        if settings.mode == "never":
            return by_page
        wanted, notes = pages_to_ocr(by_page, settings.mode)
        self._notes += notes
        if not wanted:
            return by_page
        require_extra(self.path, "reading scanned pages (OCR)", "ocr", ("PIL", "pypdfium2"))
        check_page_count(self.path, len(wanted), settings)  # before rendering them all
        with large_pages(self.path):
            images = render_pdf_pages(data, wanted, settings.dpi)
            self._notes += large_page_notes(wanted, images)
            read_pages = ocr_pages(self.path, images, settings)
        for number, page in zip(wanted, read_pages, strict=True):
            read: list[Line] = list(scan_lines(page, number, settings.dpi))
            if not read and by_page[number - 1]:  # OCR saw nothing: keep the layer, say so
                self._notes.append(f"page {number}: OCR found no text either; its layer is kept")
                continue
            by_page[number - 1] = read
            self._rotations[number] = page.rotation
        return by_page

    def _finish(
        self, lines: list[Line], pages: int, metadata: dict[str, Any], outline: list[OutlineEntry]
    ) -> Parsed:
        """Clean the lines, find the title and headings, and note what OCR read."""
        unify_sizes(lines)
        lines = join_heading_lines(lines)
        if any(isinstance(line, ScanLine) for line in lines):
            metadata["ocr"] = True
        kept, counts = clean_blocks(lines, self.cleaning, pages)
        kept_lines = [line for line in kept if isinstance(line, Line)]
        textless = sorted(set(range(1, pages + 1)) - {line.page for line in kept_lines})
        if textless and self.cleaning.ocr.mode == "never":  # else a scan reads as if empty
            shown = ", ".join(map(str, textless[:10])) + (", …" if len(textless) > 10 else "")
            self._notes.append(
                f"{len(textless)} of {pages} pages have no text (page {shown}): scanned? --ocr "
                "never is set, so none was read by OCR (--ocr auto reads pages without text)"
            )
        title = title_line(kept_lines, metadata.get("title", ""))
        if title is not None:
            metadata["title"] = title.text
        if outline:
            blocks = with_outline(kept_lines, outline, title)
        else:
            blocks = with_font_sizes(kept_lines, title)
        self._scanned = kept_lines
        return Parsed(blocks, pages, metadata, counts=counts)

    def add_hints(self, document: Document) -> None:
        """The box map of the document's OCR'd lines, the pages turned, and OCR's notes."""
        if document.metadata.get("ocr"):
            document.metadata[BOX_MAP_HINT] = box_map(
                document.page_content, getattr(self, "_scanned", [])
            )
            document.metadata[SCAN_PAGES_HINT] = dict(getattr(self, "_rotations", {}))
        for note in getattr(self, "_notes", []):
            add_note(document.metadata, note)


def _metadata(reader: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    try:
        info = reader.metadata or {}
        title = clean_inline(str(info.get("/Title") or ""))
        author = clean_inline(str(info.get("/Author") or ""))
        if title:
            out["title"] = title
        if author:
            out["author"] = author
        created = getattr(reader.metadata, "creation_date", None)
        if created is not None:
            out["doc_date"] = created.isoformat(timespec="seconds")
    except Exception:
        pass
    return out
