"""A file's stamp (size, mtime and sha256 of its bytes, taken before it is parsed) and its
recorded state, without the records database (``pipeline.state`` keeps them there): the plan
compares them, and ``inspect`` plans one file without importing SQLAlchemy."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from ragingest.loaders.base import open_regular
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
    def of(cls, path: Path) -> FileStamp:
        """Stat first, then hash: a change during hashing shows at the next run."""
        stat = os.stat(path)
        with open_regular(path) as handle:  # a FIFO swapped in can't block the hash
            digest = hashlib.file_digest(handle, "sha256").hexdigest()
        return cls(stat.st_size, stat.st_mtime_ns, digest)


@dataclass(frozen=True)
class FileState:
    """What a run recorded about a file: its stamp, its chunk count and the ragingest version."""
    stamp: FileStamp
    chunks: int
    version: str = VERSION
