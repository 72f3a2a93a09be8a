"""Find the files to ingest: directories walked in sorted order, hidden entries skipped,
include/exclude globs on the path relative to the root.

Only regular files are yielded, and every entry that is not taken is reported as a
``SkippedFile`` with its reason, decided from ``lstat``/``stat`` before anything is opened (a
FIFO or a device would block or never end a read):

- FIFOs, sockets and devices, and symlinks resolving to one;
- symlinks that loop, dangle, or resolve outside every ingested root (``follow_outside``
  lets them through, folders included, each real folder walked once);
- symlinks to folders inside a root (their target is walked where it lies: no duplicates);
- folders that can't be listed.

A path given directly is its own root, so naming a symlink on the command line follows it.
Each ``FoundFile`` carries the ``FileIdentity`` (device, inode) the walk checked; the loaders
read only that file (``loaders.base.read_bytes``), so a path swapped for a symlink out of the
root between the walk and the read is refused, not followed.
Names that are not valid UTF-8 come from ``os`` surrogate-escaped; ``source`` shows them
with ``\\xNN`` escapes so reports, metadata and the databases always get valid text.

The ``source`` key of a file (unique across the run's roots): ``source_keys``.
"""

from __future__ import annotations

import errno
import fnmatch
import logging
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ragingest.loaders.inputs.identity import FileIdentity
from ragingest.loaders.inputs.source_keys import printable, source_bases, source_of

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FoundFile:
    """A file the walk found under an ingested root."""

    path: Path
    root: Path  # the ingested root the walk started at (globs, its .ragingest.toml)
    base: Path | None = None  # what ``source`` is relative to (``source_bases``); None: root
    identity: FileIdentity | None = None  # what the walk checked; None: not walked

    @property
    def source(self) -> str:
        """The file's ``source`` key: its path relative to its base (``source_bases``)."""
        return source_of(self.path, self.base or self.root)


@dataclass(frozen=True)
class SkippedFile:
    """An entry of the walk that is not read, and why."""

    path: Path
    root: Path
    kind: str  # "not_regular" | "symlink_loop" | "dangling_symlink" | "outside_root" | ...
    reason: str
    base: Path | None = None  # as ``FoundFile.base``

    @property
    def source(self) -> str:
        """The file's ``source`` key: its path relative to its base (``source_bases``)."""
        return source_of(self.path, self.base or self.root)


_TYPES = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a folder"),
)


def file_type_name(mode: int) -> str:
    """What a file of stat ``mode`` is, in words ('a FIFO (named pipe)', 'a folder', ...)."""
    return next((name for test, name in _TYPES if test(mode)), "not a regular file")


def _matches(relative: str, patterns: Sequence[str]) -> bool:
    name = relative.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatch(relative, p) or fnmatch.fnmatch(name, p) for p in patterns)


def _wanted(relative: str, include: Sequence[str], exclude: Sequence[str]) -> bool:
    if include and not _matches(relative, include):
        return False
    return not (exclude and _matches(relative, exclude))


def _inside(target: str, roots: Sequence[str]) -> bool:
    return any(target == r or target.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


class _Walk:
    def __init__(self, roots: Sequence[str], follow_outside: bool) -> None:
        self.roots = roots  # real paths of the ingested roots
        self.follow_outside = follow_outside
        self.visited: set[str] = set()  # real folders walked (loops via followed links)

    def resolve_link(self, path: str) -> tuple[str, os.stat_result | None, str, str]:
        """(real target, its stat, skip kind, skip reason); the kind is "" when the link is
        to be followed, the stat None when the target can't be reached."""
        try:
            target = os.path.realpath(path, strict=True)
            info = os.stat(target)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return (
                    "",
                    None,
                    "symlink_loop",
                    "a symlink loop (Too many levels of symbolic links)",
                )
            if isinstance(exc, FileNotFoundError):
                return "", None, "dangling_symlink", "a broken symlink (No such file or directory)"
            return "", None, "unreadable", f"cannot follow the symlink: {exc.strerror or exc}"
        if not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
            kind = file_type_name(info.st_mode)
            reason = f"a symlink to {printable(target)}, {kind}, not a regular file"
            return target, info, "not_regular", reason
        if not self.follow_outside and not _inside(target, self.roots):
            return (
                target,
                info,
                "outside_root",
                (
                    f"a symlink to {printable(target)}, outside the ingested folders "
                    "(--follow-symlinks-outside follows it)"
                ),
            )
        return target, info, "", ""

    def files(
        self, root: Path, folder: Path, include: Sequence[str], exclude: Sequence[str]
    ) -> Iterator[FoundFile | SkippedFile]:
        try:
            self.visited.add(os.path.realpath(folder))
            with os.scandir(folder) as scan:
                entries = sorted(scan, key=lambda e: e.name)
        except OSError as exc:
            yield SkippedFile(
                folder, root, "unreadable", f"cannot list the folder: {exc.strerror or exc}"
            )
            return
        for entry in entries:
            if entry.name.startswith("."):
                continue
            path = Path(entry.path)
            relative = path.relative_to(root).as_posix()
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError as exc:
                yield SkippedFile(path, root, "unreadable", f"cannot stat: {exc.strerror or exc}")
                continue
            via_symlink = stat.S_ISLNK(info.st_mode)
            if via_symlink:
                target, target_info, kind, reason = self.resolve_link(entry.path)
                is_folder = target_info is not None and stat.S_ISDIR(target_info.st_mode)
                if kind:
                    if is_folder or _wanted(relative, include, exclude):
                        yield SkippedFile(path, root, kind, reason)
                    continue
                assert target_info is not None
                info = target_info
                if is_folder:
                    if not self.follow_outside or _inside(target, self.roots):
                        why = f"a symlink to the folder {printable(target)}, walked where it lies"
                        yield SkippedFile(path, root, "symlink_folder", why)
                    elif target in self.visited:
                        why = f"a symlink to the folder {printable(target)}, already walked"
                        yield SkippedFile(path, root, "symlink_loop", why)
                    else:
                        yield from self.files(root, path, include, exclude)
                    continue
            if stat.S_ISDIR(info.st_mode):
                yield from self.files(root, path, include, exclude)
                continue
            if not _wanted(relative, include, exclude):
                continue
            if not stat.S_ISREG(info.st_mode):
                kind = file_type_name(info.st_mode)
                yield SkippedFile(path, root, "not_regular", f"{kind}, not a regular file")
                continue
            yield FoundFile(path, root, identity=FileIdentity.of(info, via_symlink))


def walk_entries(
    paths: Sequence[str | Path],
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    follow_outside: bool = False,
) -> Iterator[FoundFile | SkippedFile]:
    """Every entry under ``paths``: a ``FoundFile`` to read or a ``SkippedFile`` with why,
    keyed by ``source_bases``."""
    roots = [os.path.realpath(p) for p in paths]
    walker = _Walk(roots, follow_outside)
    bases = source_bases(paths) if len(paths) > 1 else [None] * len(paths)
    for given, base in zip(paths, bases, strict=True):
        for entry in _entries_of(Path(given), walker, include, exclude):
            yield replace(entry, base=base) if base is not None else entry


def _entries_of(
    path: Path, walker: _Walk, include: Sequence[str], exclude: Sequence[str]
) -> Iterator[FoundFile | SkippedFile]:
    if path.is_dir():
        yield from walker.files(path, path, include, exclude)
        return
    try:
        info = path.stat()
    except OSError as exc:
        yield SkippedFile(path, path.parent, "unreadable", exc.strerror or str(exc))
        return
    if stat.S_ISREG(info.st_mode):  # a path given directly: its symlink is followed
        yield FoundFile(path, path.parent, identity=FileIdentity.of(info, via_symlink=True))
    else:
        kind = file_type_name(info.st_mode)
        yield SkippedFile(path, path.parent, "not_regular", f"{kind}, not a regular file")


def walk(
    paths: Sequence[str | Path],
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    follow_outside: bool = False,
    skipped: list[SkippedFile] | None = None,
) -> Iterator[FoundFile]:
    """The regular files under ``paths`` (a file given directly is its own root's child).
    Entries not taken go to ``skipped``; without the list each is logged as a warning."""
    for entry in walk_entries(paths, include, exclude, follow_outside):
        if isinstance(entry, FoundFile):
            yield entry
        elif skipped is not None:
            skipped.append(entry)
        else:
            log.warning("skipped %s: %s", entry.source, entry.reason)
