"""Collection names: what a user types → the name of the Chroma collection that holds it.

Chroma accepts 3-512 characters from ``[a-zA-Z0-9._-]``, starting and ending with a letter or
digit (a Chroma server of an older version: 3-63, no ``..``, not an IPv4 address). A user may
type ``kb``, ``отпуск`` or ``my docs``; refusing those would make a copied cron line fail every
run, so every name is accepted and kept as typed (messages, ``status``, the alias table, every
command takes it again), and only the Chroma collection behind it is named safely:

- a name Chroma accepts in every version is used as is (existing collections keep theirs);
- any other gets ``chroma_name``: a readable ASCII form (Cyrillic transliterated, other
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


def is_chroma_safe(name: str) -> bool:
    """Whether every Chroma version accepts ``name`` as a collection name."""
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


def chroma_name(name: str) -> str:
    """The Chroma collection name for the collection a user calls ``name`` (see the module
    docstring). Raises ``ValueError`` for an empty name."""
    if not name or not name.strip():
        raise ValueError("a collection name can't be empty: give --collection NAME, e.g. kb")
    if is_chroma_safe(name):
        return name
    readable = _UNSAFE.sub("-", _transliterate(name))
    readable = re.sub(r"\.{2,}", ".", readable)[:_READABLE].strip("._-") or "collection"
    digest = hashlib.blake2b(name.encode("utf-8"), digest_size=4).hexdigest()
    return f"{readable}-{digest}"
