"""Readers from the file system, for an access policy with ``unix = true``: a file's POSIX
read permissions as principal strings.

Contract of ``unix_readers(path)``: the owner when it may read (``unix:user:NAME``), the owning
group when it may (``unix:group:NAME``), every caller who names principals when others may
(``schema.PUBLIC_PRINCIPAL``), and each named user and group of the file's POSIX ACL
(``system.posix_acl_access``) whose entry, under the ACL's mask, allows reading; each only
when it may also pass through every folder above the file (the file a symlink leads to:
its own folders, not the link's; their x bits: a world-readable
file in a folder only ``hr`` may enter is ``hr``'s, not everyone's). A name the
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


Reader = tuple[str, int]  # ("user", uid) | ("group", gid) | ("other", -1)


def unix_readers(path: Path) -> list[str]:
    """The principals that may read ``path`` by its mode bits and POSIX ACL and reach it
    through every folder above it (module docstring)."""
    try:
        info = os.stat(path)
        # the folders above the file itself: a symlink's own folders grant nothing
        folders = [os.stat(folder) for folder in Path(os.path.realpath(path)).parents]
    except OSError:
        return []
    entries = read_acl(path)
    found = acl_readers(info, entries) if entries else mode_readers(info)
    return [_name(reader) for reader in found if all(_search(reader, f) for f in folders)]


def acl_readers(info: os.stat_result, entries: list[tuple[int, int, int]]) -> list[Reader]:
    """The readers an ACL's ``entries`` allow, each under the ACL's mask where it applies."""
    mask = next((perm for tag, perm, _id in entries if tag == MASK), 0x07)
    kinds = {USER_OBJ: "user", USER: "user", GROUP_OBJ: "group", GROUP: "group", OTHER: "other"}
    found: list[Reader] = []
    for tag, perm, ident in entries:
        masked = perm & mask if tag in (USER, GROUP_OBJ, GROUP) else perm
        if tag not in kinds or not masked & READ:
            continue
        number = {USER_OBJ: info.st_uid, GROUP_OBJ: info.st_gid, OTHER: -1}.get(tag, ident)
        found.append((kinds[tag], number))
    return found


def mode_readers(info: os.stat_result) -> list[Reader]:
    """The readers the mode bits of ``info`` allow."""
    mode = info.st_mode
    found: list[Reader] = []
    if mode & stat.S_IRUSR:
        found.append(("user", info.st_uid))
    if mode & stat.S_IRGRP:
        found.append(("group", info.st_gid))
    if mode & stat.S_IROTH:
        found.append(("other", -1))
    return found


def _search(reader: Reader, folder: os.stat_result) -> bool:
    """Whether ``reader`` may pass through ``folder`` (its x bit for them). Judged without the
    folder's ACL and, for a group, as a member who is neither the folder's owner nor in its
    group: a reader is dropped, never added, where that is unsure."""
    kind, number = reader
    mode = folder.st_mode
    if kind == "user":
        if number == 0:  # root passes every folder
            return True
        if folder.st_uid == number:
            return bool(mode & stat.S_IXUSR)
        if folder.st_gid in _groups_of(number):
            return bool(mode & stat.S_IXGRP)
    elif kind == "group" and folder.st_gid == number:
        return bool(mode & stat.S_IXGRP)
    return bool(mode & stat.S_IXOTH)


def _groups_of(uid: int) -> set[int]:
    """The groups of user ``uid`` (none when the system does not know it)."""
    if pwd is None:
        return set()
    try:
        entry = pwd.getpwuid(uid)
        return set(os.getgrouplist(entry.pw_name, entry.pw_gid))
    except (KeyError, OSError):
        return set()


def _name(reader: Reader) -> str:
    kind, number = reader
    if kind == "other":
        return PUBLIC_PRINCIPAL
    if kind == "user":
        return f"unix:user:{user_name(number)}"
    return f"unix:group:{group_name(number)}"
