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

    device: int
    inode: int
    via_symlink: bool = False

    @classmethod
    def of(cls, info: os.stat_result, via_symlink: bool = False) -> FileIdentity:
        """The identity of the file ``info`` (a stat result) describes."""
        return cls(info.st_dev, info.st_ino, via_symlink)

    def matches(self, info: os.stat_result) -> bool:
        """Whether ``info`` (an ``fstat`` of an opened descriptor) is this file."""
        return (info.st_dev, info.st_ino) == (self.device, self.inode)
