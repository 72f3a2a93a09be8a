"""What the walk checked of a file, for the read to compare: its device and inode.

A loader opens the path again (``loaders.base.read_bytes``); comparing the descriptor's
``fstat`` with this identity refuses a path swapped for a symlink out of the root, or for
another file, between the walk and the read (a time-of-check/time-of-use race).
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class FileIdentity:
    """The file the walk checked: its device and inode, and whether the walk reached it
    through a symlink it verified. A reader opens the path again and compares (``loaders.base.
    read_bytes``): a path swapped for another file or a symlink after the walk is not read."""

    device: int | None  # None: not compared (read on another machine, see ``elsewhere``)
    inode: int
    via_symlink: bool = False

    @classmethod
    def of(cls, info: os.stat_result, via_symlink: bool = False) -> FileIdentity:
        """The identity of the file ``info`` (a stat result) describes."""
        return cls(info.st_dev, info.st_ino, via_symlink)

    def matches(self, info: os.stat_result) -> bool:
        """Whether ``info`` (an ``fstat`` of an opened descriptor) is this file."""
        same_device = self.device is None or info.st_dev == self.device
        return same_device and info.st_ino == self.inode

    def elsewhere(self) -> FileIdentity:
        """This identity for a reader on another machine (a Ray worker): a shared folder's
        device number differs between machines, its inodes do not."""
        return FileIdentity(None, self.inode, self.via_symlink)

    def as_text(self) -> str:
        """``"DEVICE:INODE:SYMLINK"`` (a plain column between processes; ``from_text``)."""
        return f"{'' if self.device is None else self.device}:{self.inode}:{int(self.via_symlink)}"

    @classmethod
    def from_text(cls, text: str) -> FileIdentity | None:
        """The identity ``as_text`` wrote; None for ``""`` (no identity)."""
        if not text:
            return None
        device, inode, via_symlink = text.split(":")
        return cls(int(device) if device else None, int(inode), via_symlink == "1")
