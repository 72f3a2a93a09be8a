"""Readers from the file system, for an access policy with ``unix = true``: a file's POSIX
read permissions as principal strings.

Contract of ``unix_readers(path)``: the owner when it may read (``unix:user:NAME``), the owning
group when it may (``unix:group:NAME``), every caller who names principals when others may
(``schema.PUBLIC_PRINCIPAL``), and each named user and group of the file's POSIX ACL
(``system.posix_acl_access``) whose entry, under the ACL's mask, allows reading. A name the
system can't resolve is written as its number (``unix:user:1001``). Where extended attributes
or ACLs are not supported (another OS, a file system without them) only the mode bits count.
A file that can't be stat'ed gives no readers (the run's read of it fails, named).
"""

from __future__ import annotations

import os
import stat
import struct
from pathlib import Path

try:  # POSIX only: elsewhere owners are written as their numbers
    import grp
    import pwd
except ImportError:  # pragma: no cover - Windows
    grp = pwd = None  # type: ignore[assignment]

from ragingest.schema import PUBLIC_PRINCIPAL

ACL_XATTR = "system.posix_acl_access"
ACL_VERSION = 2
# tags of the Linux xattr format: a u32 version, then (u16 tag, u16 perm, u32 id) entries
USER_OBJ, USER, GROUP_OBJ, GROUP, MASK, OTHER = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
READ = 0x04


def user_name(uid: int) -> str:
    """The user's name, or its number when the system has none."""
    try:
        return pwd.getpwuid(uid).pw_name if pwd is not None else str(uid)
    except KeyError:
        return str(uid)


def group_name(gid: int) -> str:
    """The group's name, or its number when the system has none."""
    try:
        return grp.getgrgid(gid).gr_name if grp is not None else str(gid)
    except KeyError:
        return str(gid)


def acl_entries(raw: bytes) -> list[tuple[int, int, int]]:
    """``(tag, perm, id)`` of each entry of a ``system.posix_acl_access`` value; [] when it is
    not that format (then the mode bits decide)."""
    if len(raw) < 4 or (len(raw) - 4) % 8 or struct.unpack_from("<I", raw)[0] != ACL_VERSION:
        return []
    return [struct.unpack_from("<HHI", raw, offset) for offset in range(4, len(raw), 8)]


def read_acl(path: Path) -> list[tuple[int, int, int]]:
    """The file's POSIX ACL entries ([] when it has none or the system has no ACLs)."""
    getxattr = getattr(os, "getxattr", None)
    if getxattr is None:
        return []
    try:
        return acl_entries(getxattr(path, ACL_XATTR))
    except OSError:  # no ACL on the file (ENODATA), or none on this file system (ENOTSUP)
        return []


def unix_readers(path: Path) -> list[str]:
    """The principals that may read ``path`` by its mode bits and POSIX ACL (module
    docstring)."""
    try:
        info = os.stat(path)
    except OSError:
        return []
    entries = read_acl(path)
    if not entries:
        return mode_readers(info)
    mask = next((perm for tag, perm, _id in entries if tag == MASK), 0x07)
    names = []
    for tag, perm, ident in entries:
        masked = perm & mask if tag in (USER, GROUP_OBJ, GROUP) else perm
        if not masked & READ:
            continue
        if tag == USER_OBJ:
            names.append(f"unix:user:{user_name(info.st_uid)}")
        elif tag == USER:
            names.append(f"unix:user:{user_name(ident)}")
        elif tag == GROUP_OBJ:
            names.append(f"unix:group:{group_name(info.st_gid)}")
        elif tag == GROUP:
            names.append(f"unix:group:{group_name(ident)}")
        elif tag == OTHER:
            names.append(PUBLIC_PRINCIPAL)
    return names


def mode_readers(info: os.stat_result) -> list[str]:
    """The principals the mode bits of ``info`` let read."""
    mode = info.st_mode
    names = []
    if mode & stat.S_IRUSR:
        names.append(f"unix:user:{user_name(info.st_uid)}")
    if mode & stat.S_IRGRP:
        names.append(f"unix:group:{group_name(info.st_gid)}")
    if mode & stat.S_IROTH:
        names.append(PUBLIC_PRINCIPAL)
    return names
