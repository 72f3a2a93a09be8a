"""MkDocs Material variants as FastAPI's docs write them, read for their words (the rules
``splitters.dialects`` applies; docs/rules.md, "Documentation dialects").

One rule each, every pattern linear in the line (single quantifiers over disjoint classes, so
a hostile file's long line does not stall the split stage):

- ``heading_anchor_out(title)``: an attribute list written with spaces, ``{ #first-steps }``
  or ``{ #id .class }``, out of a heading's title (the metadata keys); like ``{#id}``, it stays
  in the embedded text (e5 reads an anchor's English words).
- ``block_marker(line)``: a pymdownx ``blocks`` marker (``/// note | Title``, ``//// tab |
  Python 3.10+``, a closing ``///``): the title kept, the marker out (``''``: a line of
  markup only); ``None``: not a marker.
- ``include_out(text)``: FastAPI's source include directive (``{* ../../docs_src/app.py hl[3]
  *}``) out, as text: the file it names is never read (data is never code), and its path is
  not words.
- ``TERMY``/``console_fence``/``console_words(line)``: the lines of a fence inside ``<div
  class="termy">`` (an animated console), or of a ````` ```console ````` fence (a chunk may
  start inside the div), lose their colouring tags (``<font color=…>``, ``<u style=…>``,
  ``<span …>``), the command and its output kept.
- ``abbr_words(text)``: ``<abbr title="Expansion">ASGI</abbr>`` → ``ASGI (Expansion)``: the
  title is words (often the translation), not markup.
"""

from __future__ import annotations

import re

_SPACED_ATTRIBUTES = re.compile(r"\{[ \t]+[#.][\w:.-]+(?:[ \t][^{}\n]*)?\}")
_BLOCK = re.compile(r"^[ \t]*/{3,}(.*)$")
_BLOCK_KIND = re.compile(r"[\w-]*")
_INCLUDE = re.compile(r"\{\*[^{}\n]*\*\}")
TERMY = re.compile(r"^[ \t]*<div\s+class=[\"']termy[\"'][^<>]*>", re.IGNORECASE)
TERMY_END = re.compile(r"</div>", re.IGNORECASE)
_CONSOLE_FENCE = re.compile(r"^ {0,3}(?:`{3,}|~{3,})[ \t]*console\b", re.IGNORECASE)
_CONSOLE_TAG = re.compile(r"</?(?:font|u|span|b|i|strong|em)\b[^<>\n]*>", re.IGNORECASE)
_ABBR = re.compile(r"<abbr\s+title=\"([^\"<>\n]*)\"\s*>([^<\n]*)</abbr>", re.IGNORECASE)
# whether a text may hold any of them (most texts hold none: they come back as they are)
CHEAP = re.compile(r"\{[ \t]+[#.]|\{\*|^[ \t]*///|<abbr|termy", re.M | re.IGNORECASE)


def heading_anchor_out(title: str) -> str:
    """``title`` less its spaced attribute lists (module docstring)."""
    return _SPACED_ATTRIBUTES.sub("", title) if "{" in title else title


def block_marker(line: str) -> str | None:
    """The words of a blocks marker line, ``None`` when ``line`` is not one (module
    docstring): three or more slashes, then nothing, or a kind (``note``, ``tab``,
    ``details``), optionally ``| Title``."""
    if "///" not in line:
        return None
    marker = _BLOCK.match(line)
    if not marker:
        return None
    kind, bar, title = marker.group(1).partition("|")
    if not _BLOCK_KIND.fullmatch(kind.strip()) or (bar and not kind.strip()):
        return None  # prose or a path after the slashes: not a marker
    return title.strip()


def include_out(text: str) -> str:
    """``text`` less its ``{* path *}`` include directives (module docstring)."""
    return _INCLUDE.sub("", text) if "{*" in text else text


def console_fence(line: str) -> bool:
    """Whether a fence's opening ``line`` names a console (module docstring)."""
    return _CONSOLE_FENCE.match(line) is not None


def console_words(line: str) -> str:
    """A console line of a termy block less its colouring tags (module docstring)."""
    return _CONSOLE_TAG.sub("", line) if "<" in line else line


def abbr_words(text: str) -> str:
    """``text`` with each ``<abbr title>`` read as ``inner (title)`` (module docstring)."""
    if "<abbr" not in text.lower():
        return text
    return _ABBR.sub(_abbr, text)


def _abbr(match: re.Match[str]) -> str:
    inner, expansion = match.group(2), match.group(1).strip()
    return f"{inner} ({expansion})" if expansion else inner
