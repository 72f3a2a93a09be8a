"""Deeply nested HTML without losing text: libxml2 (under lxml, under unstructured) stops
building the tree at 255 levels and drops everything deeper without an error, so a page
nested deeper is flattened first. Written by hand because no parser option lifts that limit
for ``partition_html`` (``huge_tree`` is not passed through).

``flatten_deep(markup)`` returns ``(markup, note)``: the markup unchanged and ``""`` when it
nests less than ``MAX_DEPTH``; else with the container tags that carry no Markdown structure
(div, span, section, font, ...) removed, block ones replaced by a line break; if that is
still too deep, the page as plain text paragraphs. ``note`` says which happened.
"""

from __future__ import annotations

import html
import re

MAX_DEPTH = 200  # below libxml2's 255, leaving room for the levels unstructured adds

_TAG = re.compile(r"<(/?)([A-Za-z][\w:-]*)[^>]*?(/?)>")
# closed implicitly by the next sibling, so never counted as a level
_IMPLIED = {"p", "li", "dt", "dd", "tr", "td", "th", "option", "thead", "tbody", "tfoot"}
_VOID = {
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
    "source", "track", "wbr",
}  # fmt: skip
_BLOCK = (
    "div|section|article|main|aside|header|footer|center|form|fieldset|figure|figcaption|"
    "nav|address|details|summary|hgroup"
)
_INLINE = "span|font|b|i|u|em|strong|small|big|sub|sup|a|abbr|cite|mark|s|strike|label|q"
_CONTAINERS = re.compile(rf"</?(?:{_BLOCK})\b[^>]*>", re.IGNORECASE)
_INLINE_TAGS = re.compile(rf"</?(?:{_INLINE})\b[^>]*>", re.IGNORECASE)


def nesting_depth(markup: str) -> int:
    """The deepest element nesting (implicitly closed and void elements not counted)."""
    depth = deepest = 0
    for closing, name, self_closing in _TAG.findall(markup):
        name = name.lower()
        if name in _VOID or name in _IMPLIED or self_closing:
            continue
        if closing:
            depth = max(0, depth - 1)
        else:
            depth += 1
            deepest = max(deepest, depth)
    return deepest


def flatten_deep(markup: str) -> tuple[str, str]:
    """``(markup, note)``: the markup as it is when it nests less than the parser's limit, else
    flattened so its text is kept, with a note saying what was lost."""
    depth = nesting_depth(markup)
    if depth < MAX_DEPTH:
        return markup, ""
    flat = _INLINE_TAGS.sub("", _CONTAINERS.sub("<br>", markup))
    if nesting_depth(flat) < MAX_DEPTH:
        return flat, (
            f"HTML nested {depth} levels deep (the parser stops at 255): container tags "
            "flattened so all text is kept; paragraph breaks between them may be lost"
        )
    text = html.unescape(re.sub(r"<[^>]+>", "\n", flat))
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n|\n", text) if p.strip()]
    body = "".join(f"<p>{html.escape(p)}</p>" for p in paragraphs)
    return f"<html><body>{body}</body></html>", (
        f"HTML nested {depth} levels deep (the parser stops at 255): read as plain text so "
        "all text is kept; headings, lists and tables of the page are lost"
    )
