"""Loaders: one file in, LangChain ``Document``s of normalized Markdown out."""

from __future__ import annotations

from pathlib import Path

from ragingest.errors import UnsupportedFormatError
from ragingest.loaders.base import MAX_FILE_BYTES, FileLoader
from ragingest.loaders.text import TextLoader
from ragingest.loaders.walk import FoundFile, walk

LOADERS: list[type[FileLoader]] = [TextLoader]


def loader_for(
    path: str | Path, root: str | Path | None = None, max_bytes: int = MAX_FILE_BYTES
) -> FileLoader:
    """The loader for ``path`` by its extension; ``UnsupportedFormatError`` if there is none."""
    suffix = Path(path).suffix.lower()
    for loader in LOADERS:
        if suffix in loader.suffixes:
            return loader(path, root, max_bytes)
    known = ", ".join(sorted(s for loader in LOADERS for s in loader.suffixes))
    raise UnsupportedFormatError(
        path, f"no loader for {suffix or 'files without extension'} (supported: {known})"
    )


def supported_suffixes() -> set[str]:
    return {s for loader in LOADERS for s in loader.suffixes}


__all__ = ["FileLoader", "FoundFile", "TextLoader", "loader_for", "supported_suffixes", "walk"]
