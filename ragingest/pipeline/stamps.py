"""A file's stamp (size, mtime and sha256 of its bytes, taken before it is parsed) and its
recorded state, without the records database (``pipeline.state`` keeps them there): the plan
compares them, and ``inspect`` plans one file without importing SQLAlchemy."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from ragingest.loaders.base import open_regular
from ragingest.loaders.inputs.identity import FileIdentity
from ragingest.version import __version__


def _code_version() -> str:
    """ragingest's version + a hash of its source: chunks depend on the code, so after any
    change of it (an upgrade, a local edit) every file is parsed once more. The record manager
    still skips the chunks that came out the same, and their vectors come from the cache."""
    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode())
        digest.update(path.read_bytes())
    return f"{__version__}+{digest.hexdigest()[:12]}"


VERSION = _code_version()


@dataclass(frozen=True)
class FileStamp:
    """What identifies a file's content: size, modification time and sha256."""
    size: int
    mtime_ns: int
    sha256: str

    @classmethod
    def of(cls, path: Path, identity: FileIdentity | None = None) -> FileStamp:
        """Stat first, then hash, both on one open descriptor: a change during hashing shows
        at the next run. With the walk's ``identity`` only the file the walk checked is
        stamped (``UnreadableFileError`` otherwise, as its read would raise)."""
        with open_regular(path, identity) as handle:  # a FIFO swapped in can't block the hash
            stat = os.fstat(handle.fileno())
            digest = hashlib.file_digest(handle, "sha256").hexdigest()
        return cls(stat.st_size, stat.st_mtime_ns, digest)


@dataclass(frozen=True)
class FileState:
    """What a run recorded about a file: its stamp, its chunk count, the ragingest version and,
    in a collection with an access policy, the readers its chunks carry (``access``, sorted
    principal strings; None: no policy). A run compares it with what the policy says now, so a
    change of readers alone is found (``pipeline.access_sync``)."""
    stamp: FileStamp
    chunks: int
    version: str = VERSION
    access: tuple[str, ...] | None = None


# Failures that cost a bound's worth of time or memory each try: recorded in the file's state
# row (version ``failed:KIND:VERSION``), so an unchanged file is not tried again every run.
RECORDED_FAILURES = ("timeout", "memory", "too_large", "too_many_chunks")
_FAILED = "failed:"


def failed_state(
    stamp: FileStamp, kind: str, chunks: int, access: tuple[str, ...] | None = None
) -> FileState:
    """The state row of a file that failed with ``kind`` (its last good ``chunks`` stay, with
    the readers ``access``)."""
    return FileState(stamp, chunks, f"{_FAILED}{kind}:{VERSION}", access)


def known_failure(stamp: FileStamp | None, state: FileState | None) -> str | None:
    """The kind the file failed with last time, when its bytes and this code are the same
    as then; else None (then it is tried again)."""
    if stamp is None or state is None or not state.version.startswith(_FAILED):
        return None
    kind, _, version = state.version[len(_FAILED) :].partition(":")
    same = (state.stamp.size, state.stamp.sha256) == (stamp.size, stamp.sha256)
    return kind if same and version == VERSION else None
