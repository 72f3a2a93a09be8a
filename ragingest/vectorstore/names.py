"""Collection names: what a user types → the physical name everything of the collection is
kept under — the store's collection, the writer's lock file, the records namespace, the lexical
index and parent tables, the alias table's rows.

This naming is ragingest's, not one store's: the lock file is named before any store is opened,
and the records database (shared by every machine writing a collection, whatever the store)
keys its rows by it, so it must be one pure function of the typed name. It was drawn to
Chroma's rules, which are among the strictest (3-512 characters from ``[a-zA-Z0-9._-]``,
starting and ending with a letter or digit; an older Chroma server: 3-63, no ``..``, not an
IPv4 address), so the name is also safe as a file name and in a SQL table name; a backend
whose store is stricter still maps it inside its own folder. A user may type ``kb``,
``отпуск`` or ``my docs``; refusing those would make a copied cron line fail every run, so
every name is accepted and kept as typed (messages, ``status``, the alias table, every command
takes it again), and only the physical name is made safe:

- a name safe in every store is used as is (existing collections keep theirs);
- any other gets ``safe_name``: a readable ASCII form (Cyrillic transliterated, other
  characters → ``-``) plus ``-`` and 8 hex digits of the name's BLAKE2b digest, at most 63
  characters — the same name for every command and machine, and two names that read alike
  (``my docs``, ``my-docs``) never share a collection.
"""

from __future__ import annotations

import hashlib
import re

_VALID = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9._-]{1,510}[a-zA-Z0-9]$")
_IPV4 = re.compile(r"^[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$")
_UNSAFE = re.compile(r"[^a-zA-Z0-9._-]+")
_READABLE = 40  # characters of the readable part of a mapped name
_LATIN = "a b v g d e e zh z i y k l m n o p r s t u f kh ts ch sh shch - y - e yu ya i yi ye g u"
_CYRILLIC = dict(zip("абвгдеёжзийклмнопрстуфхцчшщъыьэюяіїєґў", _LATIN.split(), strict=True))


def is_safe(name: str) -> bool:
    """Whether ``name`` is a physical name as it is (module docstring: every Chroma version
    accepts it as a collection name)."""
    return bool(_VALID.match(name)) and ".." not in name and not _IPV4.match(name)


def _transliterate(name: str) -> str:
    out = []
    for char in name:
        lower = char.lower()
        if lower in _CYRILLIC:
            latin = _CYRILLIC[lower]
            out.append(latin.capitalize() if char != lower and latin != "-" else latin)
        else:
            out.append(char)
    return "".join(out)


def safe_name(name: str) -> str:
    """The physical name of the collection a user calls ``name`` (see the module docstring).
    Raises ``ValueError`` for an empty name."""
    if not name or not name.strip():
        raise ValueError("a collection name can't be empty: give --collection NAME, e.g. kb")
    if is_safe(name):
        return name
    readable = _UNSAFE.sub("-", _transliterate(name))
    readable = re.sub(r"\.{2,}", ".", readable)[:_READABLE].strip("._-") or "collection"
    digest = hashlib.blake2b(name.encode("utf-8"), digest_size=4).hexdigest()
    return f"{readable}-{digest}"
