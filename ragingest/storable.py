"""What Chroma stores of a metadata key and value: its value types, the numbers it stores
exactly, the keys it refuses and the bounds on what one chunk may bring. ``schema`` lists the
keys themselves and re-exports these rules.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import TypeGuard, TypeVar, cast

Scalar = str | int | float | bool
# Chroma stores scalars and non-empty lists of one scalar type (front-matter tags, ...)
MetadataValue = Scalar | list[str] | list[int] | list[float] | list[bool]
StoredList = list[str] | list[int] | list[float] | list[bool]
# A stored chunk's metadata, as Chroma takes it
Metadata = dict[str, MetadataValue]

_T = TypeVar("_T")

# Metadata from content (a foreign loader's documents, given Documents, front matter) never
# carries an internal key: every ``_`` key of it (``LOADER_HINTS``, a loader's notes) is left
# out there (``from_content``); none was ever stored.
INTERNAL_PREFIX = "_"

# Keys Chroma refuses (``storable_keys``): empty, starting with '$' or '#' (its operators and
# fields), its reserved 'chroma:' names, lone surrogates (not UTF-8). Such a key is stored
# renamed, 'field_' + its word characters, or left out when nothing is left or the name is taken.
RENAMED_PREFIX = "field_"
_REFUSED_START = ("$", "#", "chroma:")
_SURROGATES = re.compile("[\ud800-\udfff]")

# What one chunk may bring to Chroma: a wide table (every column a key) must not reach it
# whole (Chroma's metadata segment fails on tens of thousands of keys, for good). Past the
# bounds a value stays in the chunk's text only.
MAX_EXTRA_KEYS = 64  # keys a loader adds beyond SCHEMA's (catalogue columns, ...) per chunk
MAX_KEY_CHARS = 64  # a longer key is not stored as metadata
MAX_VALUE_CHARS = 2048  # a longer string value is cut (the text keeps it whole)


# Numbers Chroma stores exactly: int64 and finite float64 values. A number beyond them keeps
# its digits as a string: a 20-digit account number, 2**80, a decimal with more digits than a
# float holds, NaN ('12345678901234567890', '1208925819614629174706176', 'nan'); ``--where``
# reads a value the same way (``exact_number``), so it matches what was stored.
INT64 = (-(2**63), 2**63 - 1)
_DECIMAL = re.compile(r"^[-+]?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?$")


def storable_number(value: _T) -> _T | str:
    """A number as Chroma stores it exactly: an int in int64 or a finite float as it is, any
    other its digits (``str``); a value of another type as it is."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if INT64[0] <= value <= INT64[1] else str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def exact_number(text: str) -> int | float | str | None:
    """The number a decimal ``text`` (ASCII digits, sign, point, exponent) says, as stored:
    an int in int64, a float that keeps every digit of it, else ``text`` itself; None when it
    is no decimal number ('NaN', 'inf', '1_000', '')."""
    if not _DECIMAL.match(text):
        return None
    if "." not in text and "e" not in text.lower():
        number = int(text)
        return number if INT64[0] <= number <= INT64[1] else text
    value = float(text)
    if math.isfinite(value) and Decimal(text) == Decimal(repr(value)):
        return value
    return text


def storable_key(key: object) -> str | None:
    """``key`` as Chroma stores it: itself when Chroma takes it, else renamed (see
    ``RENAMED_PREFIX``), None when nothing of it is left."""
    text = key if isinstance(key, str) else str(key)
    refused = not text or text.startswith(_REFUSED_START) or _SURROGATES.search(text)
    if isinstance(key, str) and not refused:
        return text
    words = re.sub(r"\W+", "_", _SURROGATES.sub("", text)).strip("_")
    return RENAMED_PREFIX + words if words else None


def storable_text(value: str) -> str:
    """``value`` with each lone surrogate (not UTF-8: Chroma refuses it) as U+FFFD."""
    return _SURROGATES.sub("\ufffd", value)


def storable_keys(metadata: Mapping[str, object]) -> tuple[dict[str, object], str]:
    """``metadata`` with every key Chroma refuses renamed or left out (``storable_key``), lone
    surrogates in string values replaced and numbers it can't store exactly as their digits
    (``storable_number``); internal (``_``) keys pass as they are. Returns it and a note for the
    run report ('' when no key changed)."""
    kept: dict[str, object] = {}
    renamed: list[str] = []
    dropped: list[str] = []
    for key, value in metadata.items():
        if isinstance(key, str) and key.startswith(INTERNAL_PREFIX):
            kept[key] = value
            continue
        value = storable_number(value)
        if isinstance(value, str) and _SURROGATES.search(value):
            value = storable_text(value)
            renamed.append(f"{_shown(key)}'s value (lone surrogates → U+FFFD)")
        elif isinstance(value, list) and any(isinstance(v, str) and _SURROGATES.search(v)
                                             for v in value):  # fmt: skip
            value = [storable_text(v) if isinstance(v, str) else v for v in value]
            renamed.append(f"{_shown(key)}'s value (lone surrogates → U+FFFD)")
        name = storable_key(key)
        if name == key:
            kept[key] = value
        elif name is None or name in metadata or name in kept:
            dropped.append(_shown(key))
        else:
            kept[name] = value
            renamed.append(f"{_shown(key)} → {name!r}")
    if not renamed and not dropped:
        return kept, ""
    parts = []
    if renamed:
        parts.append("changed: " + ", ".join(renamed))
    if dropped:
        parts.append("left out (nothing left of the name, or it is taken): " + ", ".join(dropped))
    return kept, "metadata keys Chroma refuses: " + "; ".join(parts)


def _shown(key: object) -> str:
    text = storable_text(str(key))
    return ascii(text if len(text) <= 40 else text[:40] + "…")


def bound_value(value: MetadataValue) -> MetadataValue:
    """A string cut to ``MAX_VALUE_CHARS`` (each string of a list too); else ``value``."""
    if isinstance(value, str) and len(value) > MAX_VALUE_CHARS:
        return value[:MAX_VALUE_CHARS]
    if isinstance(value, list):
        return cast(StoredList, [bound_value(v) for v in value[:MAX_EXTRA_KEYS]])
    return value


def storable_list(value: object) -> TypeGuard[StoredList]:
    """Whether ``value`` is a list Chroma stores: non-empty, of one scalar type."""
    if not isinstance(value, list) or not value:
        return False
    kinds = {bool if isinstance(v, bool) else type(v) for v in value}
    return len(kinds) == 1 and kinds <= {str, int, float, bool}
