"""A leading YAML front matter block: where it ends, and the one rule that turns it into metadata
on every path (a file, a LangChain loader's ``Document``, ``split_documents``).

Contract:

- ``front_matter_end(text)``: the offset just after a leading ``---`` … ``---`` block of the
  normalized text (``\\n`` line ends, no BOM), 0 when there is none.
- ``read_front_matter(text)``: ``(fields, body)``; ``fields`` is the block parsed as YAML
  (``yaml.safe_load``), keys as written; a block that is not a YAML mapping (or nests too deep
  to parse) falls back to its ``key: value`` lines as strings (and ``fields`` says so under
  ``PARSE_NOTE``).
- ``front_matter_metadata(fields)``: ``(metadata, special)``. Values keep their YAML type as far
  as Chroma stores it: str/int/float/bool as they are, dates as ISO 8601 strings, a list of
  scalars as a list (one type: numbers and booleans of a mixed list become strings), a mapping
  or a list of mappings as compact JSON (bounded: ``MAX_NESTED_CHARS``; the same text on every
  run: a ``!!set`` sorted, timestamps in ISO 8601), a set as a sorted list; ``null`` and empty
  lists are left out (Chroma refuses them). A key ragingest computes (``OURS``: the document
  keys and every key the splitter or ingest fills, ``schema.SCHEMA``) or an underscore key is
  never overwritten: it is kept as ``FRONT_MATTER_PREFIX + key`` (``fm_source``); keys a loader
  fills for other formats (``author``, ``status``) are taken as written; ``renamed_note``
  says which were prefixed, for the run report. ``title``, ``date``
  and ``content_type`` (any letter case) are read by us: ``special`` holds them as strings.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import re
from typing import cast

import yaml

from ragingest.schema import DOCUMENT_KEYS, SCHEMA, Metadata, MetadataValue, Scalar

FRONT_MATTER_PREFIX = "fm_"  # a front-matter key that collides with one of ours is kept so
SPECIAL = ("title", "date", "content_type")  # read by the loaders (title, doc_date, hint)
PARSE_NOTE = "_front_matter_note"  # fields: why the block was read as plain key: value lines
MAX_NESTED_CHARS = 2048  # a mapping longer than this as JSON is cut (MAX_VALUE_CHARS)
MAX_FRONT_MATTER_CHARS = 65536  # a longer block is read as plain key: value lines

# the keys ragingest computes for every document and chunk; the loader-filled ones a front
# matter may give (``author``, ``status``, ...) are taken from it
OURS = frozenset({*DOCUMENT_KEYS, *(k for k, f in SCHEMA.items() if f.stage != "loader")})
_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?\n)?---[ \t]*(?:\n|\Z)", re.DOTALL)
_KEY_VALUE = re.compile(r"^([A-Za-z_][\w-]*)\s*:\s*(.*?)\s*$", re.MULTILINE)


def front_matter_end(text: str) -> int:
    """The offset just after the leading front matter block of ``text`` (0: none)."""
    match = _FRONT_MATTER.match(text)
    return match.end() if match else 0


def read_front_matter(text: str) -> tuple[dict[str, object], str]:
    """The fields of ``text``'s leading front matter (keys as written) and the text after it."""
    match = _FRONT_MATTER.match(text)
    if not match:
        return {}, text
    block = match.group(1) or ""
    return _parsed(block), text[match.end() :]


def _parsed(block: str) -> dict[str, object]:
    if len(block) <= MAX_FRONT_MATTER_CHARS:
        try:
            loaded = yaml.safe_load(block)
        except yaml.YAMLError as exc:
            reason = f"front matter is not valid YAML ({str(exc).splitlines()[0]})"
        except RecursionError:  # PyYAML's parser recurses once per level
            reason = "front matter nested too deep"
        else:
            if loaded is None:
                return {}
            if isinstance(loaded, dict):
                return {str(k): v for k, v in loaded.items()}
            reason = "front matter is not a YAML mapping"
    else:
        reason = f"front matter over {MAX_FRONT_MATTER_CHARS} characters"
    fields: dict[str, object] = {k: v.strip("'\"") for k, v in _KEY_VALUE.findall(block)}
    fields[PARSE_NOTE] = f"{reason}: its 'key: value' lines kept as strings"
    return fields


def special(fields: dict[str, object], name: str) -> str:
    """The value of one of ``SPECIAL`` (any letter case) as a string, '' when absent."""
    for key, value in fields.items():
        if key.lower() == name and value is not None and not isinstance(value, (dict, list)):
            return str(_scalar(value) or "").strip()
    return ""


def front_matter_metadata(fields: dict[str, object]) -> Metadata:
    """The metadata of ``fields`` (module docstring); ``SPECIAL`` keys and the parse note are
    left to the caller."""
    out: Metadata = {}
    for key, value in fields.items():
        if key == PARSE_NOTE or key.lower() in SPECIAL or not key:
            continue
        stored = storable(value)
        if stored is None:
            continue
        name = FRONT_MATTER_PREFIX + key if key in OURS or key.startswith("_") else key
        out.setdefault(name, stored)
    return out


def renamed_note(fields: dict[str, object]) -> str:
    """The run report's note on the keys ``front_matter_metadata`` kept under the prefix ('':
    none)."""
    taken = [k for k in fields if k and k != PARSE_NOTE and k.lower() not in SPECIAL
             and (k in OURS or k.startswith("_")) and storable(fields[k]) is not None]  # fmt: skip
    if not taken:
        return ""
    kept = ", ".join(f"{k!r} as {FRONT_MATTER_PREFIX + k!r}" for k in taken[:10])
    return f"front matter keys that ragingest computes itself are kept under a prefix: {kept}"


def storable(value: object) -> MetadataValue | None:
    """``value`` as Chroma stores it (module docstring); ``None`` when it cannot be stored."""
    if value is None:
        return None
    if isinstance(value, set | frozenset):  # YAML's !!set: a list in one order, any hash seed
        value = _canonical(value, {})
    if isinstance(value, list):
        items = [_scalar(v) for v in value if v is not None]
        if not items:
            return None
        if any(v is None for v in items):  # a list of mappings or lists
            return _json(value)
        kinds = {bool if isinstance(v, bool) else type(v) for v in items}
        return cast(MetadataValue, items) if len(kinds) == 1 else [str(v) for v in items]
    scalar = _scalar(value)
    return scalar if scalar is not None else _json(value)


def _scalar(value: object) -> Scalar | None:
    if isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return value.isoformat()
    return None


def _json(value: object) -> str:
    """Compact JSON of ``value`` (``_canonical``), cut at ``MAX_NESTED_CHARS``: encoded lazily,
    so YAML aliases nesting one list in another many times over are never expanded whole."""
    encoder = json.JSONEncoder(ensure_ascii=False, default=str, separators=(",", ":"))
    parts: list[str] = []
    size = 0
    try:
        for part in encoder.iterencode(_canonical(value, {})):
            parts.append(part)
            size += len(part)
            if size >= MAX_NESTED_CHARS:
                break
    except (ValueError, TypeError, RecursionError):  # an alias that refers to itself; too deep
        parts.append("…")
    return "".join(parts)[:MAX_NESTED_CHARS]


def _canonical(value: object, done: dict[int, object]) -> object:
    """``value`` (what ``yaml.safe_load`` makes) as JSON types, the same on every run: a set
    as a list in sorted order (a set's own order follows the hash seed, and the chunk ids
    hash the metadata), a timestamp in ISO 8601, bytes in base64, a mapping's keys as strings
    (in the order written). ``done`` maps each container already converted (by ``id``) to its
    copy: an alias is converted once and shared, never expanded."""
    if isinstance(value, str | bool | int | float) or value is None:
        return value
    if isinstance(value, dt.date | dt.datetime | dt.time):
        return value.isoformat()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if id(value) in done:
        return done[id(value)]
    if isinstance(value, dict):
        mapping: dict[str, object] = {}
        done[id(value)] = mapping
        for key, item in value.items():
            mapping.setdefault(_key(_canonical(key, done)), _canonical(item, done))
        return mapping
    if isinstance(value, list | tuple | set | frozenset):
        items: list[object] = []
        done[id(value)] = items
        converted = [_canonical(item, done) for item in value]
        if isinstance(value, set | frozenset):
            converted.sort(key=lambda v: (type(v).__name__, _key(v)))
        items.extend(converted)
        return items
    return str(value)


def _key(value: object) -> str:
    """A mapping key as JSON writes it (``null``, ``true``, ``1``), any other value as a string."""
    return value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
