"""What OCR gives: ``OcrPage``, one page image as read, and its ``OcrLine``s. The reader
(``ocr``) and its cache (``ocr_cache``) both build them; neither imports the other for them.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class OcrLine:
    """One text line Tesseract read: its text, its box in the upright page image (pixels:
    left, top, right, bottom), its words' boxes and confidences (0-100)."""
    text: str
    box: tuple[int, int, int, int]
    words: list[tuple[int, int, int, int]] = field(default_factory=list)
    confidences: list[float] = field(default_factory=list)
    size: float = 0.0  # Tesseract's estimate of the text size (hOCR x_size), pixels
    bold: bool = False  # heavier than the page's body text (``_mark_bold``)
    paragraph: int = 0  # Tesseract's paragraph (its layout analysis), from 1


@dataclass
class OcrPage:
    """One page image as read: its size in pixels (upright), the rotation that made it
    upright (degrees clockwise), its lines in reading order, and the image itself (PNG)."""
    width: int
    height: int
    rotation: int
    lines: list[OcrLine]
    png: bytes = b""

    def confidences(self) -> list[float]:
        """The confidence of every word on the page."""
        return [c for line in self.lines for c in line.confidences]
