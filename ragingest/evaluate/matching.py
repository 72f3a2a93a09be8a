"""Finding a text a person typed inside stored text: case and runs of whitespace ignored
(a user types the rule, not its line breaks)."""

from __future__ import annotations


def _folded(text: str) -> tuple[str, list[int]]:
    """``text`` lower-cased with each whitespace run as one space, and for every character
    of the result its offset in ``text``."""
    out: list[str] = []
    where: list[int] = []
    for i, char in enumerate(text):
        if char.isspace():
            if out and out[-1] != " ":
                out.append(" ")
                where.append(i)
            continue
        lower = char.lower()
        out.append(lower if len(lower) == 1 else char)
        where.append(i)
    return "".join(out), where


def locate(needle: str, haystack: str) -> tuple[int, int] | None:
    """``[start, end)`` of ``needle`` in ``haystack``, ignoring case and whitespace runs."""
    want = _folded(needle.strip())[0]
    have, where = _folded(haystack)
    at = have.find(want) if want else -1
    if at < 0:
        return None
    return where[at], where[at + len(want) - 1] + 1


def contains(haystack: str, needle: str) -> bool:
    """Whether ``needle`` is found in ``haystack`` (as ``locate`` matches)."""
    return locate(needle, haystack) is not None
