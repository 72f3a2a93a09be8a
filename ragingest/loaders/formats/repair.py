"""Text that is almost right: a few broken bytes in a UTF-8 file, a stray NUL, a declared
charset that lies. A whole file is not rejected for them: the bytes are decoded with
U+FFFD in place of each broken one (one code point per byte, so offsets into the decoded text
stay exact) and a note names the byte offsets; a lying charset is replaced by the one that
fits, with a note.

Contract: ``repair_utf8(data)`` → ``(text, bad byte offsets)``, or None when the bytes are not
mostly UTF-8 (more than ``MAX_BROKEN_SHARE`` of them broken); ``replace_nuls(text)`` →
``(text, NUL character offsets)``; ``better_charset(data, declared)`` → the encoding that
fits the bytes when ``declared`` decodes them to mojibake, else None.
"""

from __future__ import annotations

import re

MAX_BROKEN_SHARE = 0.001  # broken bytes per byte a text file may have (at least MIN_BROKEN)
MIN_BROKEN = 16
_SHOWN = 5  # offsets named in a note
_ESCAPED = re.compile("[\udc80-\udcff]")  # surrogateescape's stand-ins for broken bytes
_SINGLE_BYTE = re.compile(r"^(latin[-_]?1|iso[-_]?8859.*|cp125\d|windows[-_]?125\d|(us-)?ascii)$")
CYRILLIC_CODECS = ("cp1251", "koi8_r", "cp866")
_LOWER = re.compile(r"[а-яё]")
_UPPER_INSIDE = re.compile(r"(?<=[А-Яа-яЁё])[А-ЯЁ]")
_ODD = re.compile(r"[^\x00-\x7fА-Яа-яЁё«»—–…№„“”‘’•·\u00a0°]")


def cyrillic_score(sample: bytes, codec: str) -> float:
    """How much ``sample`` decoded with ``codec`` looks like Russian text: lower-case letters
    count for it; capitals inside words and characters Russian text lacks, against."""
    text = sample.decode(codec, errors="replace")
    return (
        len(_LOWER.findall(text))
        - 2 * len(_UPPER_INSIDE.findall(text))
        - 5 * len(_ODD.findall(text))
    )


def mostly_high_bytes(sample: bytes) -> bool:
    """Whether most letters of ``sample`` are bytes over 0x7f (a Cyrillic code page's text,
    not Western text with a few accents)."""
    high = sum(1 for b in sample if b >= 0x80)
    letters = high + sum(1 for b in sample if 65 <= b <= 90 or 97 <= b <= 122)
    return bool(letters) and high / letters >= 0.3


def broken_bound(size: int) -> int:
    return max(MIN_BROKEN, int(size * MAX_BROKEN_SHARE))


def repair_utf8(data: bytes) -> tuple[str, list[int]] | None:
    """``data`` as UTF-8 with each broken byte as U+FFFD, and their byte offsets; None when
    more than ``broken_bound`` bytes are broken (then it is not UTF-8 at all)."""
    text = data.decode("utf-8", errors="surrogateescape")
    positions = [m.start() for m in _ESCAPED.finditer(text)]
    if not positions or len(positions) > broken_bound(len(data)):
        return None
    return _ESCAPED.sub("\ufffd", text), byte_offsets(text, positions)


def nul_offsets(data: bytes) -> list[int]:
    """The byte offset of each NUL in ``data``."""
    return [m.start() for m in re.finditer(b"\x00", data)] if b"\x00" in data else []


def byte_offsets(text: str, positions: list[int]) -> list[int]:
    """The UTF-8 byte offset of each character position (broken bytes count one each)."""
    out, done, total = [], 0, 0
    for position in positions:
        total += len(text[done:position].encode("utf-8", "surrogateescape"))
        done = position
        out.append(total)
    return out


def offsets_note(what: str, offsets: list[int], unit: str = "byte") -> str:
    """'3 invalid UTF-8 bytes at byte offsets 5, 9, 12: replaced with U+FFFD'."""
    shown = ", ".join(str(o) for o in offsets[:_SHOWN])
    more = f" and {len(offsets) - _SHOWN} more" if len(offsets) > _SHOWN else ""
    plural = "s" if len(offsets) > 1 else ""
    where = f"{unit} offset{plural} {shown}{more}"
    return f"{len(offsets)} {what}{plural} at {where}: replaced with U+FFFD"


def better_charset(data: bytes, declared: str) -> str | None:
    """The encoding that fits ``data`` when the ``declared`` one decodes it without an error
    but wrongly: valid multi-byte UTF-8 declared as a single-byte code page (by chance it
    practically never is), or Russian text declared as a Latin code page."""
    name = declared.strip().lower()
    if not _SINGLE_BYTE.match(name) or max(data, default=0) < 0x80:
        return None
    try:
        data.decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError:
        pass
    sample = data[:65536]
    if name.replace("windows", "cp").replace("-", "").replace("_", "") == "cp1251":
        return None
    if not mostly_high_bytes(sample):
        return None
    best = max(CYRILLIC_CODECS, key=lambda codec: cyrillic_score(sample, codec))
    try:
        declared_score = cyrillic_score(sample, name)
    except LookupError:
        return None
    return best if cyrillic_score(sample, best) > max(0.0, declared_score) + 10 else None
