"""What every loader shares: the document shape, file checks and document-level metadata.

A loaded document is a LangChain ``Document`` whose ``page_content`` is normalized Markdown
(``\\n`` line ends, no BOM) and whose metadata holds the document keys of ``ragingest.schema``
plus, where the format has pages, ``_page_map`` (sorted ``[(offset, page), ...]``), and for
text formats ``_source_map`` (``source_map.SourceMap``: offsets back into the file as decoded);
keys with a leading underscore are never stored in Chroma.
"""

from __future__ import annotations

import datetime as dt
import errno
import io
import os
import re
import stat
from collections.abc import Iterator
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from langchain_core.document_loaders import BaseLoader
from langchain_core.documents import Document

from ragingest.defaults import MAX_FILE_MB
from ragingest.errors import (
    EmptyDocumentError,
    FileTooLargeError,
    MissingExtraError,
    MissingExtraFileError,
    UnreadableFileError,
)
from ragingest.loaders.inputs.identity import FileIdentity
from ragingest.loaders.inputs.source_keys import printable, source_of
from ragingest.loaders.inputs.walk import file_type_name
from ragingest.schema import TITLE_FROM_NAME_HINT, short_hash

MAX_FILE_BYTES = MAX_FILE_MB * 1024 * 1024  # larger files are refused: bounded time and memory

_CYRILLIC = re.compile(r"[А-Яа-яЁё]")
_LATIN = re.compile(r"[A-Za-z]")


def detect_language(text: str, sample: int = 20_000) -> str:
    """'ru', 'en' or 'und' for ``text``, from the share of Cyrillic letters in its first
    ``sample`` characters."""
    head = text[:sample]
    cyrillic, latin = len(_CYRILLIC.findall(head)), len(_LATIN.findall(head))
    if cyrillic + latin == 0:
        return "und"
    return "ru" if cyrillic >= 0.3 * (cyrillic + latin) else "en"


def normalize_text(text: str) -> str:
    """The normalized form offsets refer to: no BOM, ``\\n`` line ends, no NUL characters."""
    return text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")


def read_bytes(
    path: Path, max_bytes: int = MAX_FILE_BYTES, identity: FileIdentity | None = None
) -> bytes:
    """The file's bytes; only a regular file is read. It is opened non-blocking and checked
    again on the open descriptor, so a FIFO or device swapped in after the walk can't block.

    With the walk's ``identity`` the descriptor read must be the file the walk checked (device
    and inode, by ``fstat`` on it), and a path the walk saw as a plain file is opened without
    following a symlink: a path swapped after the walk (for a symlink out of the root, or
    another file) raises ``UnreadableFileError`` and nothing of it is read."""
    try:
        info = path.stat()
    except OSError as exc:
        raise UnreadableFileError(path, f"cannot stat the file: {exc.strerror or exc}") from exc
    _check_regular(path, info, max_bytes)  # before opening: a device is never opened
    descriptor = _open_checked(path, identity)
    try:
        _check_regular(path, os.fstat(descriptor), max_bytes)
        with os.fdopen(descriptor, "rb", closefd=False) as handle:
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        raise UnreadableFileError(path, f"cannot read the file: {exc.strerror or exc}") from exc
    finally:
        os.close(descriptor)
    if len(data) > max_bytes:  # it grew after the stat
        raise FileTooLargeError(
            path, f"over the {max_bytes / 2**20:.0f} MiB limit (raise it with --max-file-mb)"
        )
    return data


_REPLACED = "replaced after the walk (by a symlink or another file): not read; ingest it again"


def _open_checked(path: Path, identity: FileIdentity | None) -> int:
    """A read-only, non-blocking descriptor of ``path`` that is the walk's file (see
    ``read_bytes``); raises ``UnreadableFileError``."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if identity is not None and not identity.via_symlink:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP and identity is not None:  # a symlink where a file was
            raise UnreadableFileError(path, _REPLACED) from exc
        raise UnreadableFileError(path, f"cannot read the file: {exc.strerror or exc}") from exc
    try:
        info = os.fstat(descriptor)
    except OSError as exc:
        os.close(descriptor)
        raise UnreadableFileError(path, f"cannot stat the file: {exc.strerror or exc}") from exc
    if identity is not None and not identity.matches(info):
        os.close(descriptor)
        raise UnreadableFileError(path, _REPLACED)
    return descriptor


def open_regular(path: Path, identity: FileIdentity | None = None) -> io.BufferedReader:
    """``path`` opened for reading only if it is a regular file (non-blocking open, checked
    on the descriptor): a FIFO or device raises ``OSError`` instead of blocking a hash. With
    the walk's ``identity`` only the file the walk checked is opened (as ``read_bytes``
    opens it; ``UnreadableFileError`` otherwise)."""
    if identity is not None:
        descriptor = _open_checked(path, identity)
    else:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    mode = os.fstat(descriptor).st_mode
    if not stat.S_ISREG(mode):
        os.close(descriptor)
        raise OSError(errno.ENXIO, f"{file_type_name(mode)}, not a regular file", str(path))
    return os.fdopen(descriptor, "rb")


def _check_regular(path: Path, info: os.stat_result, max_bytes: int) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise UnreadableFileError(
            path, f"{file_type_name(info.st_mode)}, not a regular file: skipped"
        )
    size = info.st_size
    if size > max_bytes:
        raise FileTooLargeError(
            path,
            f"{size / 2**20:.1f} MiB is over the {max_bytes / 2**20:.0f} MiB limit "
            "(raise it with --max-file-mb)",
        )


def file_metadata(
    path: Path, root: Path | None, text: str, **extra: object
) -> dict[str, object]:
    """Document-level metadata; ``extra`` (title, doc_date, ...) wins where given."""
    source = source_of(path, root)
    mtime = dt.datetime.fromtimestamp(path.stat().st_mtime, tz=dt.UTC)
    metadata: dict[str, Any] = {
        "source": source,
        "title": printable(path.stem),
        "file_type": path.suffix.lower().lstrip("."),
        "doc_date": mtime.isoformat(timespec="seconds"),
        "language": detect_language(text),
        "doc_id": short_hash(source),
        "file_path": printable(os.path.abspath(path)),  # source is relative to the root
    }
    metadata.update({k: v for k, v in extra.items() if v not in (None, "")})
    metadata[TITLE_FROM_NAME_HINT] = not extra.get("title")
    return metadata


class FileLoader(BaseLoader):
    """Base of the file loaders: ``lazy_load`` yields the documents of one file or raises a
    ``FileError`` naming it. Subclasses implement ``_documents``."""

    suffixes: tuple[str, ...] = ()
    # the extra of pyproject.toml that holds this format's parser, and the modules of it the
    # loader imports (``require_extra``); none for the formats the core reads
    extra: str | None = None
    needs: tuple[str, ...] = ()

    def __init__(
        self, path: str | Path, root: str | Path | None = None, max_bytes: int = MAX_FILE_BYTES
    ) -> None:
        self.path = Path(path)
        self.root = Path(root) if root else None
        self.max_bytes = max_bytes
        self.identity: FileIdentity | None = None  # the walk's; set by ``loader_for``

    def read_bytes(self) -> bytes:
        """The file's bytes (``read_bytes``): the file the walk checked, within the size
        limit."""
        return read_bytes(self.path, self.max_bytes, self.identity)

    def lazy_load(self) -> Iterator[Document]:
        """The file's non-empty documents; ``EmptyDocumentError`` when it has none, and
        ``MissingExtraFileError`` when its format's extra is not installed."""
        if self.extra is not None:
            require_extra(self.path, f"reading {self.path.suffix.lower()} files", self.extra,
                          self.needs)  # fmt: skip
        produced = False
        for document in self._documents():
            if document.page_content.strip():
                produced = True
                yield document
        if not produced:
            raise EmptyDocumentError(self.path, "no text found in the file")

    def _documents(self) -> Iterator[Document]:
        raise NotImplementedError


def require_extra(path: Path, feature: str, extra: str, modules: tuple[str, ...]) -> None:
    """``MissingExtraFileError`` naming ``path`` and the ``pip install 'ragingest[extra]'``
    line when one of ``modules`` (what ``feature`` imports) is not installed. Looked up, not
    imported: the parser's own import comes when it runs."""
    for module in modules:
        try:
            found = find_spec(module) is not None
        except (ImportError, ValueError):  # a parent package missing, or blocked
            found = False
        if not found:
            reason = str(MissingExtraError(feature, extra))
            raise MissingExtraFileError(path, f"{reason} ({module} is not installed)")
