"""Image files (``.png .jpg .jpeg .tif .tiff``, a multi-page TIFF page by page) read by OCR.

Each image is one page (each frame of a TIFF one more), read by Tesseract (``loaders.scans.ocr``)
and then handled as a scanned PDF page is (``loaders.formats.pdf``): headings from line heights,
paragraphs joined, page furniture cleaned, ``page_boxes`` per chunk. With ``--ocr never`` or
without Tesseract the file fails, named, with the reason; nothing else is affected.
"""

from __future__ import annotations

from ragingest.errors import ParseError
from ragingest.loaders.formats.pdf import PdfLoader
from ragingest.loaders.formats.pdf_lines import Line
from ragingest.loaders.formats.rich import Parsed
from ragingest.loaders.scans.ocr import ocr_pages
from ragingest.loaders.scans.page_images import large_page_notes, large_pages
from ragingest.loaders.scans.scan import image_frames, scan_lines

# what a page image is assumed to be scanned at when its file does not say (line heights in
# points only matter relative to each other)
_ASSUMED_DPI = 300


class ImageLoader(PdfLoader):
    """Scanned pages as image files: every frame OCR'd."""
    suffixes = (".png", ".jpg", ".jpeg", ".tif", ".tiff")
    extra, needs = "ocr", ("PIL",)
    format_name = "image"

    def _parse(self, data: bytes) -> Parsed:
        settings = self.cleaning.ocr
        self._notes: list[str] = []
        self._rotations: dict[int, int] = {}
        if settings.mode == "never":
            raise ParseError(self.path, "an image is read only by OCR, and --ocr never is set")
        with large_pages(self.path):
            frames = image_frames(data)
            self._notes += large_page_notes(range(1, len(frames) + 1), frames)
            read_pages = ocr_pages(self.path, frames, settings)
        lines: list[Line] = []
        for number, page in enumerate(read_pages, 1):
            lines.extend(scan_lines(page, number, _ASSUMED_DPI))
            self._rotations[number] = page.rotation
        if not lines:
            raise ParseError(
                self.path, f"OCR found no text on its {len(frames)} page(s) (a picture?)"
            )
        return self._finish(lines, len(frames), {}, [])
