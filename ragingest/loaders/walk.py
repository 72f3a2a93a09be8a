"""Find the files to ingest: directories walked in sorted order, hidden entries skipped,
include/exclude globs on the path relative to the root, symlinked directories not followed
(so a symlink loop can't trap the walk)."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class FoundFile:
    path: Path
    root: Path  # the ingested root ``source`` is relative to

    @property
    def source(self) -> str:
        try:
            return self.path.relative_to(self.root).as_posix()
        except ValueError:
            return self.path.name


def _matches(relative: str, patterns: Sequence[str]) -> bool:
    name = relative.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatch(relative, p) or fnmatch.fnmatch(name, p) for p in patterns)


def walk(
    paths: Sequence[str | Path],
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
) -> Iterator[FoundFile]:
    """Each file under ``paths`` (a file given directly is its own root's child)."""
    for given in paths:
        path = Path(given)
        if not path.is_dir():
            yield FoundFile(path, path.parent)
            continue
        root = path
        for directory, dirnames, filenames in os.walk(root, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for filename in sorted(filenames):
                if filename.startswith("."):
                    continue
                file = Path(directory) / filename
                relative = file.relative_to(root).as_posix()
                if include and not _matches(relative, include):
                    continue
                if exclude and _matches(relative, exclude):
                    continue
                yield FoundFile(file, root)
