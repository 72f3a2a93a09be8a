"""One exception type per failure kind; each names the file and a reason a user can act on."""

from __future__ import annotations

from collections.abc import Iterator

# The command's exit codes (the CLI and ``RunReport.exit_code`` return these).
EXIT_OK = 0
EXIT_FILES_FAILED = 1  # some files failed or partly failed; the others are stored
EXIT_USAGE = 2  # a usage error, a model or settings mismatch
EXIT_LOCKED = 3  # another run is writing the collection
EXIT_READ_ONLY = 4  # the store is read-only
EXIT_CORRUPT = 5  # the store is damaged
EXIT_DISK_FULL = 6  # the disk is full
EXIT_REFUSED = 7  # the run would have deleted most of the collection: nothing was changed
EXIT_UNREACHABLE = 8  # a server (Chroma, the records database) can't be reached
EXIT_INTERRUPTED = 130  # interrupted (Ctrl-C); the next run finishes the work
EXIT_TERMINATED = 143  # terminated (SIGTERM, 128 + 15); the next run finishes the work


def error_chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc``, the driver's error SQLAlchemy wraps (``orig``), and the errors each was raised
    from or during, once each."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = getattr(current, "orig", None) or current.__cause__ or current.__context__


class RagIngestError(Exception):
    """Base class of ragingest's own errors."""


class FileError(RagIngestError):
    """A file could not be ingested. The run goes on with the other files."""

    kind = "failed"

    def __init__(self, path: object, reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


class UnreadableFileError(FileError):
    """The file could not be read (permissions, not a regular file, an I/O error)."""
    kind = "unreadable"


class UnsupportedFormatError(FileError):
    """No loader reads this file's format."""
    kind = "unsupported"


class FileTooLargeError(FileError):
    """The file is over the size limit (``--max-file-mb``)."""
    kind = "too_large"


class TooManyChunksError(FileError):
    """The file splits into more chunks than the per-file bound (``--max-chunks-per-file``)."""

    kind = "too_many_chunks"


class ParseError(FileError):
    """The file's parser failed on it (a broken or hostile file)."""
    kind = "parse_failed"


class FileTimeoutError(FileError):
    """The parser ran past the per-file time limit and was stopped."""

    kind = "timeout"


class FileMemoryError(FileError):
    """The parser needed more memory than the per-file limit and was stopped."""

    kind = "memory"


class EmptyDocumentError(FileError):
    """The file holds no text to ingest."""
    kind = "empty"


class CollectionMismatchError(RagIngestError):
    """The collection was built with another model or other splitter settings."""


class LockedError(RagIngestError):
    """Another run is writing to the same collection."""


class PersistDirError(RagIngestError):
    """The ``persist_dir`` given cannot hold a store (a file is in its place)."""


class RefusedRunError(RagIngestError):
    """A run refused before changing anything: what it was given looks like a mistake."""


class MissingPathError(RefusedRunError, FileNotFoundError):
    """A path given to a run does not exist (a typo would otherwise delete its chunks)."""

    def __init__(self, paths: list[str]) -> None:
        self.paths = paths
        super().__init__(f"no such file or folder: {', '.join(paths)} (nothing was changed)")


class MassDeleteError(RefusedRunError):
    """The run would delete every source of the collection, or more than the allowed share."""


class ServerUnreachableError(RagIngestError):
    """A server the command needs (the Chroma server, the records database) can't be reached;
    the message names it and what to check. The CLI exits with ``EXIT_UNREACHABLE``."""


class NoAccessPolicyError(RagIngestError):
    """A read named principals on a collection made without an access policy: nothing could
    filter by them (every chunk is everyone's), so the read is refused rather than believed
    to filter."""


class PrincipalsRequiredError(RagIngestError):
    """A read of a collection with an access policy named no principals (and not ``ALL``)."""


def install_line(extra: str) -> str:
    """The command that installs ragingest's optional part ``extra`` (pyproject's extras)."""
    return f"pip install 'ragingest[{extra}]'"


class MissingExtraError(RagIngestError, ImportError):
    """A feature needs an optional part of ragingest (an extra) that is not installed; the
    message names the feature and the ``pip install 'ragingest[EXTRA]'`` line."""

    def __init__(self, feature: str, extra: str) -> None:
        self.feature = feature
        self.extra = extra
        super().__init__(f"{feature} needs the [{extra}] extra: {install_line(extra)}")


class MissingExtraFileError(FileError):
    """The file's format needs an extra that is not installed (``MissingExtraError``'s line);
    not recorded as a failure of the file: the run after the install reads it."""

    kind = "missing_extra"
