"""Stored text on a terminal: control characters printed escaped.

A document may hold terminal escape sequences (``ESC[2J`` clears the screen, ``ESC]0;…BEL``
sets the window title) or bidirectional overrides that reorder what is shown; ``query``
prints stored text, so it prints them as ``\\x1b``, ``\\u202e``, ... Line feeds and tabs stay.
Only the printing changes: the stored text and ``--json`` output are exact.
"""

from __future__ import annotations

import re

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def terminal_safe(text: str) -> str:
    """``text`` with every control character (but ``\\n`` and ``\\t``) escaped."""
    return _UNSAFE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)
