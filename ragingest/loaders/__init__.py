"""Loaders: one file in, LangChain ``Document``s of normalized Markdown out.

One module per family of formats (``formats/``, image files in ``scans/``); ``LOADERS`` maps
suffixes to them (``loader_for``). Beside them, along the data flow: what a run is given
(``inputs/``), parsing in bounded worker processes (``process/``), OCR (``scans/``), the
normalized Markdown and its offsets (``markdown/``) and cleaning (``cleaning/``).
"""

from __future__ import annotations

from pathlib import Path

from ragingest.errors import UnsupportedFormatError
from ragingest.loaders.base import MAX_FILE_BYTES, FileLoader
from ragingest.loaders.cleaning.rules import CleaningRules
from ragingest.loaders.formats.ebook import EpubLoader
from ragingest.loaders.formats.mail import EmailLoader, MboxLoader
from ragingest.loaders.formats.office import DocxLoader, OdtLoader, PptxLoader, RtfLoader
from ragingest.loaders.formats.pdf import PdfLoader
from ragingest.loaders.formats.tabular import CsvLoader, JsonLoader, XlsxLoader
from ragingest.loaders.formats.text import TextLoader
from ragingest.loaders.formats.web import HtmlLoader
from ragingest.loaders.inputs.identity import FileIdentity
from ragingest.loaders.inputs.walk import FoundFile, walk
from ragingest.loaders.scans.scan_image import ImageLoader

LOADERS: list[type[FileLoader]] = [
    TextLoader,
    HtmlLoader,
    PdfLoader,
    ImageLoader,
    DocxLoader,
    PptxLoader,
    OdtLoader,
    RtfLoader,
    EpubLoader,
    EmailLoader,
    MboxLoader,
    CsvLoader,
    XlsxLoader,
    JsonLoader,
]


def loader_for(
    path: str | Path,
    root: str | Path | None = None,
    max_bytes: int = MAX_FILE_BYTES,
    cleaning: CleaningRules | None = None,
    identity: FileIdentity | None = None,
) -> FileLoader:
    """The loader for ``path`` by its extension; ``UnsupportedFormatError`` if there is none.
    With the walk's ``identity`` it reads only the file the walk checked."""
    suffix = Path(path).suffix.lower()
    for loader_class in LOADERS:
        if suffix in loader_class.suffixes:
            loader = loader_class(path, root, max_bytes)
            loader.identity = identity
            if cleaning is not None and hasattr(loader, "cleaning"):
                loader.cleaning = cleaning
            return loader
    known = ", ".join(sorted(s for loader in LOADERS for s in loader.suffixes))
    raise UnsupportedFormatError(
        path, f"no loader for {suffix or 'files without extension'} (supported: {known})"
    )


def supported_suffixes() -> set[str]:
    """Every file suffix a built-in loader reads (lower case, with the dot)."""
    return {s for loader in LOADERS for s in loader.suffixes}


__all__ = [
    "LOADERS",
    "CleaningRules",
    "FileIdentity",
    "FileLoader",
    "FoundFile",
    "TextLoader",
    "loader_for",
    "supported_suffixes",
    "walk",
]
