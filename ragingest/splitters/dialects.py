"""The markup of documentation dialects, read for its words (docs/rules.md, "Documentation
dialects").

Docs are written in Markdown extended by their site generator: VitePress (``::: tip``
containers, ``{#id}`` heading anchors, ``<script setup>``, Vue components), Docusaurus/MDX
(``import``/``export`` lines, JSX components such as ``<Tabs>``, ``:::note[Title]``), MkDocs
Material (``!!! note "Title"``, ``??? tip``, ``=== "Tab"``), GitHub alerts (``> [!NOTE]``),
Sphinx/MyST directives (``.. note::``) and Hugo shortcodes (``{{< alert >}}``). Their markup is
noise to the model and to BM25, while the stored text must stay the exact source slice.

Contract:

- ``heading_title(raw)``: a heading's words, as the metadata carry them (``title``,
  ``section_path``, ``h1``–``h3``; ``clean_path`` for a path): attribute lists
  (``{#id .class}``), HTML/JSX tags (``<Badge/>``) and shortcodes out, whitespace collapsed;
  the raw title when nothing is left.
- ``words(body)``: the embedded form of a chunk's text: outside fenced code, inline code and
  table rows, ``<script>``/``<style>`` blocks, MDX ``import``/``export`` lines, container and
  admonition markers (their titles kept: ``::: tip Важно`` → ``Важно``), alert markers, tags
  (their inner text kept), shortcodes and opaque link targets (a run of ``OPAQUE_RUN`` letters
  and digits: a base64 playground link; its text kept) are removed; a body with none of them
  comes back as it is (the same string). Heading anchors (``{#table_engine-kafka}``) stay in
  the embedded text, the breadcrumb's included: e5 reads their English words (measured:
  bench/README.md, "Documentation dialects").
- MkDocs Material as FastAPI writes it (spaced ``{ #anchor }``, ``/// note | Title`` blocks,
  ``{* docs_src *}`` includes, termy consoles, ``<abbr>``): one rule each in
  ``dialect_variants``, applied by ``heading_title`` and ``words``.
- ``opaque_urls(text)``: where its opaque link targets are (``markup_pieces`` joins a piece
  that is almost all markup to a neighbour).
"""

from __future__ import annotations

import re

from ragingest.splitters import dialect_variants as variants
from ragingest.splitters.structure import Path

# a URL with a run this long of letters and digits is an opaque blob (base64 playground state),
# not words; a readable long URL (a path, an anchor) stays: dropping every long link target
# lost clickhouse_ru a question (bench/README.md, "Documentation dialects")
OPAQUE_RUN = 40

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# every pattern is linear in the line: no nested or overlapping quantifiers (possessive ones,
# ``*+``, where two would meet), and no start that scans past the next start: a hostile file's
# long lines must not stall the split stage (a regex call is one C call no deadline stops)
_BACKTICKS = re.compile(r"`+")
_ATTRIBUTES = re.compile(r"\{[#.][\w:.-]+(?:\s[^{}\n]*)?\}")
_SHORTCODE = re.compile(r"\{\{[<%][^{}\n]*[%>]\}\}")
_TAG = re.compile(r"</?[A-Za-z][\w.:-]*(?:\s[^<>]*)?>")
_OPAQUE = re.compile(r"[A-Za-z0-9+=]{" + f"{OPAQUE_RUN}" + ",}")
# link text holds no "[" but a bracketed pair ([a [b] c]): a text that could run on past the
# next "[" would make each "[" of a line scan the rest of it
_LINK = re.compile(
    r"!?\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*+)\]\("
    r"((?:[^()\s]|\([^()\s]*\)){" + f"{OPAQUE_RUN}" + r",})\)"
)
_BARE_URL = re.compile(r"https?://\S{" + f"{OPAQUE_RUN}" + ",}")
# a long target, in a link or not
_URL = re.compile(r"https?://[^\s()<>\]]{" + f"{OPAQUE_RUN}" + ",}")
_OPEN_TAG = re.compile(r"^\s*</?[A-Za-z][\w.:-]*(?:\s[^<>]*)?$")  # a tag whose > comes later
TAG_LINES = 12  # a tag written over more lines than this is not taken for one
_BLOCK_START = re.compile(r"^\s*<(script|style)\b[^>]*>", re.IGNORECASE)
_ESM = re.compile(
    r"^(?:import\s++(?:[\w*{}\s,]+?\sfrom\s++)?['\"]|export\s+(?:default\b|const\b|let\b|var\b"
    r"|function\b|class\b|async\b|\{|\*))"
)
_CONTAINER = re.compile(r"^\s*:{3,}\s*([\w-]*)(.*)$")
_ADMONITION = re.compile(
    r"^(\s*+)(?:!!!|\?\?\?\+?)\s++[\w-]++(?:\s++[\w-]++)*+\s*+(?:\"([^\"]*+)\")?\s*+$"
)
_TAB = re.compile(r"^(\s*)===\+?\s+\"([^\"]*)\"\s*$")
_ALERT = re.compile(r"^(\s*>\s*)\[!(?:NOTE|TIP|IMPORTANT|WARNING|CAUTION)\]\s*", re.IGNORECASE)
_DIRECTIVE = re.compile(r"^(\s*)\.\.\s+[\w:-]+::\s*(.*)$")
_CHEAP = re.compile(r"<|\{[#.{]|:::|!!!|\?\?\?|===|\[!|^[ \t]*\.\. |^(?:import|export)\s|://", re.M)


def heading_title(raw: str) -> str:
    """A heading's words (module docstring)."""
    title = _SHORTCODE.sub("", _ATTRIBUTES.sub("", variants.heading_anchor_out(raw)))
    if "<" in title:
        title = _inline(title)
    title = " ".join(title.split())
    return title or raw.strip()


def clean_path(path: Path) -> Path:
    """A heading path with each title as ``heading_title`` gives it."""
    return tuple((level, heading_title(title)) for level, title in path)


def words(body: str) -> str:
    """The embedded form of ``body`` (module docstring)."""
    if not _CHEAP.search(body) and not variants.CHEAP.search(body):
        return body
    out: list[str] = []
    fence = ""
    skip = ""  # the closing tag of a <script>/<style> block being left out
    termy = False  # inside a <div class="termy"> (dialect_variants)
    console = False  # a fence of a termy console: its colouring tags go
    changed = False
    lines = body.split("\n")
    tag_end = -1  # the last line of a tag written over several lines (<Tabs\n  groupId="x">)
    for i, line in enumerate(lines):
        if i <= tag_end:
            changed = True
            if i == tag_end:
                line = line[line.index(">") + 1 :]
                if not line.strip():
                    continue
            else:
                continue
        if fence:
            kept = variants.console_words(line) if console else line
            changed = changed or kept != line
            out.append(kept)
            if line.lstrip().startswith(fence):
                fence = ""
            continue
        if skip:
            changed = True
            if skip in line.lower():
                skip = ""
            continue
        if line.lstrip().startswith("|"):  # a table row stays whole (its header is matched)
            out.append(line)
            continue
        if termy or variants.TERMY.match(line):
            termy = not variants.TERMY_END.search(line)
        opened = _FENCE.match(line)
        if opened:
            fence = opened.group(1)
            console = termy or variants.console_fence(line)
            out.append(line)
            continue
        if _OPEN_TAG.match(line):
            tag_end = _tag_end(lines, i)
            if tag_end > i:
                changed = True
                continue
        block = _BLOCK_START.match(line)
        if block:
            changed = True
            close = f"</{block.group(1).lower()}>"
            if close not in line.lower():
                skip = close
            continue
        kept = _line_words(line)
        if kept != line:
            changed, kept = True, kept.rstrip()
        if kept.strip() or not line.strip():  # a line that was all markup goes
            out.append(kept)
    if not changed:
        return body
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()


def _tag_end(lines: list[str], start: int) -> int:
    """The line a tag opened on ``lines[start]`` without its ``>`` closes on, within
    ``TAG_LINES`` lines with no other ``<`` (-1: none, so it is not taken for a tag)."""
    for j in range(start + 1, min(len(lines), start + TAG_LINES)):
        if "<" in lines[j]:
            return -1
        if ">" in lines[j]:
            return j
    return -1


def _line_words(line: str) -> str:
    """One line outside code in its embedded form ('' when it is all markup)."""
    if _ESM.match(line):
        return ""
    block = variants.block_marker(line)
    if block is not None:
        return block
    container = _CONTAINER.match(line)
    if container:
        return _title_words(container.group(2))
    admonition = _ADMONITION.match(line) or _TAB.match(line)
    if admonition:
        return admonition.group(1) + (admonition.group(2) or "")
    directive = _DIRECTIVE.match(line)
    if directive:
        return directive.group(1) + directive.group(2)
    alert = _ALERT.match(line)
    if alert:
        line = alert.group(1) + line[alert.end() :]
        if not line.strip(" >\t"):
            return ""
    return _inline(line)


def _title_words(rest: str) -> str:
    """A container marker's title: ``[Title]``, ``{title="Title"}`` or the words after it."""
    rest = rest.strip()
    bracket = re.match(r"\[([^\]]*)\]", rest)
    if bracket:
        return bracket.group(1).strip()
    quoted = re.search(r"title=[\"']([^\"']*)[\"']", rest)
    if quoted:
        return quoted.group(1).strip()
    return _inline(_ATTRIBUTES.sub("", rest)).strip().strip("\"'")


def inline_words(text: str) -> str:
    """One line (a breadcrumb) with tags, shortcodes and opaque link targets out, anchors kept
    (module docstring), whitespace collapsed; ``text`` when nothing is left."""
    if not _CHEAP.search(text):
        return text
    return " ".join(_inline(text).split()) or text


def _inline(text: str) -> str:
    """``text`` with tags, shortcodes and opaque link targets out, inline code spans kept as
    they are."""
    parts: list[str] = []
    pos = 0
    for start, end in code_spans(text):
        parts += [_inline_prose(text[pos:start]), text[start:end]]
        pos = end
    parts.append(_inline_prose(text[pos:]))
    return "".join(parts)


def code_spans(text: str) -> list[tuple[int, int]]:
    """The inline code spans of ``text``: a run of backticks up to the next run of the same
    length (CommonMark), found in one pass."""
    runs = [m.span() for m in _BACKTICKS.finditer(text)] if "`" in text else []
    following: list[int | None] = [None] * len(runs)
    last: dict[int, int] = {}
    for k in range(len(runs) - 1, -1, -1):
        size = runs[k][1] - runs[k][0]
        following[k] = last.get(size)
        last[size] = k
    spans = []
    i = 0
    while i < len(runs):
        j = following[i]
        if j is None:
            i += 1
            continue
        spans.append((runs[i][0], runs[j][1]))
        i = j + 1
    return spans


def _inline_prose(text: str) -> str:
    if "{" in text:
        text = variants.include_out(_SHORTCODE.sub("", text))
    if "<" in text:
        text = variants.abbr_words(text)
        text = _TAG.sub("", text)
    if "://" in text:
        text = _LINK.sub(lambda m: m.group(1) if _OPAQUE.search(m.group(2)) else m.group(), text)
        text = _BARE_URL.sub(lambda m: "" if _OPAQUE.search(m.group()) else m.group(), text)
    return text


def opaque_urls(text: str) -> list[tuple[int, int]]:
    """The spans of the URLs in ``text`` that hold an opaque run (sorted, disjoint)."""
    urls = _URL.finditer(text) if "://" in text else iter(())
    return [m.span() for m in urls if _OPAQUE.search(m.group())]
