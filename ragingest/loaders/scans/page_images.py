"""Very large page images (a 112 Mpx poster scan, a large-format PDF page rendered for OCR):
read, said in a note, never PIL's raw warning on stderr.

PIL warns (``DecompressionBombWarning``) when it opens an image over ``Image.MAX_IMAGE_PIXELS``
(~89 Mpx) and refuses one over twice that (``DecompressionBombError``). The parser worker's
``--file-memory-mb`` bound is what keeps a large page from exhausting memory, so within
``large_pages(path)`` the warning is silenced and the refusal becomes a ``ParseError`` naming
the file; ``large_page_notes`` says which pages were over the warning's size, from the images
themselves (the same note on every run, whether the OCR cache answered or not).
"""

from __future__ import annotations

import contextlib
import io
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path

from ragingest.errors import ParseError


@contextlib.contextmanager
def large_pages(path: Path) -> Iterator[None]:
    """Within the block PIL opens large images of ``path`` without a warning, and a refused
    one raises ``ParseError`` (module docstring)."""
    from PIL import Image

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        try:
            yield
        except Image.DecompressionBombError as exc:
            raise ParseError(
                path, f"a page image is too large to read (a decompression bomb?): {exc}"
            ) from exc


def large_page_notes(numbers: Sequence[int], images: Sequence[bytes]) -> list[str]:
    """A note for each page (``numbers[i]`` is ``images[i]``'s page) over PIL's warning size."""
    from PIL import Image

    limit = Image.MAX_IMAGE_PIXELS
    notes = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        for number, image in zip(numbers, images, strict=True):
            with Image.open(io.BytesIO(image)) as opened:  # the header only
                width, height = opened.size
            if limit and width * height > limit:
                notes.append(
                    f"page {number}: a {width}x{height} image ({width * height / 1e6:.0f} Mpx, "
                    f"over the {limit / 1e6:.0f} Mpx at which PIL warns of a decompression "
                    "bomb), read within --file-memory-mb"
                )
    return notes
