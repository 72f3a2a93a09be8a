"""``inspect --html``: the boundary figure (docs/rules.md, "The offsets contract") for any
document and any settings.

``render_html(result, text, title)`` takes ``inspect_file``'s result and the document text and
returns one self-contained HTML page (no scripts, no external files):

- a strip per chunk on a common 0…length scale (one bar per chunk), overlaps hatched, the given
  sentences drawn as lettered marks above (A, B, …) with their ``[start, end)``;
- for each sentence, the chunks that hold it whole, or "—" and the chunks it is cut across;
- the document itself with every chunk's span coloured, shared (overlap) text hatched, chunk
  starts marked ``⟦n`` and ends ``n⟧``, and the sentences outlined with their letter;
- for a scan (``pictures``: the OCR'd pages as PNG, as displayed: the boxes' frame), each page
  image with every chunk's region outlined in its colour (its ``page_boxes``) and the
  sentences' lines filled red with their letter (the document's box map,
  ``schema.BOX_MAP_HINT``).

Coordinates are code points of the text chunk offsets index: the file as decoded for text
formats, the loader's normalized Markdown for converted ones.
"""

from __future__ import annotations

import base64
import html
import itertools
import json
import string
from collections.abc import Sequence
from typing import Any

PALETTE = ("#cfe8ff", "#ffe2b8", "#d4f5d0", "#f3d3f5", "#fff5a8", "#d9dcff", "#ffd3d3")
HATCH = "repeating-linear-gradient(45deg,#9aa4b2 0 2px,transparent 2px 6px)"
MAX_LANES = 40  # up to this many chunks: one row each; more: two alternating rows
MAX_MARKS = 20  # occurrences of one sentence drawn at most

CSS = f"""
body {{ font: 14px/1.45 system-ui, sans-serif; margin: 24px; color: #1d2430; background: #fff; }}
h1 {{ font-size: 20px; margin: 0 0 4px; }}
.meta {{ color: #566; margin-bottom: 16px; }}
.figure {{ position: relative; border: 1px solid #c8ced8; border-radius: 6px; padding: 8px 12px;
  margin-bottom: 16px; }}
.lane {{ position: relative; height: 22px; margin: 3px 0; }}
.bar {{ position: absolute; top: 0; height: 20px; border: 1px solid #5a6b80; border-radius: 3px;
  font-size: 11px; line-height: 20px; overflow: hidden; white-space: nowrap; padding-left: 3px;
  box-sizing: border-box; }}
.shared {{ position: absolute; top: 0; height: 20px; background: {HATCH}; opacity: .9; }}
.mark {{ position: absolute; top: 2px; height: 16px; background: #e5484d; color: #fff;
  font-size: 11px; line-height: 16px; text-align: center; border-radius: 2px;
  min-width: 12px; box-sizing: border-box; }}
.axis {{ display: flex; justify-content: space-between; color: #778; font-size: 11px; }}
table {{ border-collapse: collapse; margin-bottom: 16px; }}
td, th {{ border: 1px solid #d5dae2; padding: 3px 8px; text-align: left; vertical-align: top; }}
th {{ background: #f2f4f7; }}
.doc {{ white-space: pre-wrap; font: 13px/1.6 ui-monospace, monospace; border: 1px solid #c8ced8;
  border-radius: 6px; padding: 12px; }}
.doc .gap {{ color: #99a; }}
.doc .ov {{ background-image: {HATCH}; }}
.doc .b {{ color: #2c4a80; font-weight: 700; font-size: 11px; }}
.doc .hl {{ box-shadow: inset 0 -3px #e5484d; font-weight: 600; }}
.doc .tag {{ background: #e5484d; color: #fff; font-size: 10px; padding: 0 3px;
  border-radius: 2px; margin-right: 2px; }}
.scans {{ display: flex; flex-wrap: wrap; gap: 12px; margin-bottom: 16px; }}
.scan {{ position: relative; width: 560px; border: 1px solid #c8ced8; }}
.scan img {{ display: block; width: 100%; }}
.scan .region {{ position: absolute; border: 3px solid; box-sizing: border-box; }}
.scan .region span {{ position: absolute; left: -3px; top: -18px; font-size: 11px;
  color: #fff; padding: 0 4px; border-radius: 2px; }}
.scan .lit {{ position: absolute; background: rgba(229, 72, 77, .35);
  outline: 1px solid #e5484d; }}
.scan .page {{ position: absolute; right: 4px; bottom: 4px; font-size: 11px; color: #566; }}
.ok {{ color: #1a7f37; font-weight: 600; }}
.no {{ color: #c4262e; font-weight: 600; }}
"""


def _letter(i: int) -> str:
    letters = string.ascii_uppercase
    return letters[i] if i < len(letters) else f"S{i + 1}"


def _occurrences(text: str, needle: str) -> list[tuple[int, int]]:
    found: list[tuple[int, int]] = []
    pos = text.find(needle) if needle else -1
    while pos != -1 and len(found) < MAX_MARKS:
        found.append((pos, pos + len(needle)))
        pos = text.find(needle, pos + 1)
    return found


def _pct(value: int, length: int) -> str:
    return f"{100 * value / max(length, 1):.4f}%"


def _strip(chunks: Sequence[dict[str, Any]], marks: list[tuple[str, int, int]], length: int) -> str:
    rows: list[str] = []
    if marks:
        cells = "".join(
            f'<div class="mark" style="left:{_pct(s, length)};width:{_pct(e - s, length)}" '
            f'title="{letter}: [{s}, {e})">{letter}</div>'
            for letter, s, e in marks
        )
        rows.append(f'<div class="lane sentences">{cells}</div>')
    lanes = len(chunks) if len(chunks) <= MAX_LANES else 2
    lane_cells: list[list[str]] = [[] for _ in range(lanes)]
    for i, chunk in enumerate(chunks):
        s, e = chunk["start_index"], chunk["end_index"]
        color = PALETTE[i % len(PALETTE)]
        label = f"{i}: [{s}, {e})" if lanes > 2 else str(i)
        cell = (
            f'<div class="bar" style="left:{_pct(s, length)};width:{_pct(e - s, length)};'
            f'background:{color}" title="chunk {i}: [{s}, {e}), {chunk["tokens"]} units">'
            f"{html.escape(label)}</div>"
        )
        if i:
            ps, pe = chunks[i - 1]["start_index"], chunks[i - 1]["end_index"]
            a, b = max(s, ps), min(e, pe)
            if a < b:
                where = f"left:{_pct(a, length)};width:{_pct(b - a, length)}"
                cell += (
                    f'<div class="shared" style="{where}" '
                    f'title="shared by chunks {i - 1} and {i}: [{a}, {b})"></div>'
                )
        lane_cells[i % lanes].append(cell)
    rows.extend(f'<div class="lane">{"".join(cells)}</div>' for cells in lane_cells)
    axis = f'<div class="axis"><span>0</span><span>{length // 2}</span><span>{length}</span></div>'
    return f'<div class="figure" id="strip">{"".join(rows)}{axis}</div>'


def _document(
    text: str, chunks: Sequence[dict[str, Any]], marks: list[tuple[str, int, int]]
) -> str:
    points = {0, len(text)}
    for chunk in chunks:
        points.update((chunk["start_index"], chunk["end_index"]))
    for _, s, e in marks:
        points.update((s, e))
    edges = sorted(p for p in points if 0 <= p <= len(text))
    starts: dict[int, list[int]] = {}
    ends: dict[int, list[int]] = {}
    for i, chunk in enumerate(chunks):
        starts.setdefault(chunk["start_index"], []).append(i)
        ends.setdefault(chunk["end_index"], []).append(i)
    mark_starts = {s: letter for letter, s, _ in marks}
    out: list[str] = []
    live: set[int] = set()
    lit_at: set[int] = set()  # marks open at this point
    mark_ends: dict[int, list[int]] = {}
    mark_opens: dict[int, list[int]] = {}
    for n, (_, s, e) in enumerate(marks):
        mark_opens.setdefault(s, []).append(n)
        mark_ends.setdefault(e, []).append(n)
    for a, b in itertools.pairwise(edges):
        for i in ends.get(a, []):
            out.append(f'<span class="b">{i}⟧</span>')
            live.discard(i)
        for i in starts.get(a, []):
            out.append(f'<span class="b">⟦{i}</span>')
            live.add(i)
        lit_at.difference_update(mark_ends.get(a, []))
        lit_at.update(mark_opens.get(a, []))
        if a in mark_starts:
            out.append(f'<span class="tag">{mark_starts[a]}</span>')
        active = sorted(live)
        body = html.escape(text[a:b])
        lit = bool(lit_at)
        classes = ["hl"] if lit else []
        if not active:
            classes.append("gap")
            style = ""
        elif len(active) == 1:
            style = f' style="background:{PALETTE[active[0] % len(PALETTE)]}"'
        else:
            classes.append("ov")
            style = f' title="chunks {", ".join(map(str, active))}"'
        cls = f' class="{" ".join(classes)}"' if classes else ""
        out.append(f"<span{cls}{style}>{body}</span>")
    for i in ends.get(len(text), []):
        out.append(f'<span class="b">{i}⟧</span>')
    return f'<div class="doc" id="document">{"".join(out)}</div>'


def _box_style(box: Sequence[float]) -> str:
    x0, y0, x1, y1 = box
    return (
        f"left:{100 * x0:.3f}%;top:{100 * y0:.3f}%;"
        f"width:{100 * (x1 - x0):.3f}%;height:{100 * (y1 - y0):.3f}%"
    )


def _scans(
    chunks: Sequence[dict[str, Any]],
    marks: list[tuple[str, int, int]],
    pictures: dict[int, bytes],
    box_map: Sequence[Sequence[float]],
) -> str:
    """Each OCR'd page image with the chunks' regions outlined and the sentences' lines lit."""
    pages: list[str] = []
    for number in sorted(pictures):
        source = "data:image/png;base64," + base64.b64encode(pictures[number]).decode("ascii")
        parts = [f'<img src="{source}" alt="page {number}">']
        for i, chunk in enumerate(chunks):
            color = PALETTE[i % len(PALETTE)].replace("#", "")
            for page, *box in json.loads(chunk.get("metadata", {}).get("page_boxes") or "[]"):
                if page == number:
                    shade = f"#{_darker(color)}"
                    parts.append(
                        f'<div class="region" id="region-{i}-{page}" title="chunk {i}" '
                        f'style="{_box_style(box)};border-color:{shade}">'
                        f'<span style="background:{shade}">{i}</span></div>'
                    )
        for letter, s, e in marks:
            for start, end, page, *box in box_map:
                if page == number and start < e and s < end:
                    style = _box_style(box[:4])  # then the line's confidence and words
                    parts.append(f'<div class="lit" title="{letter}" style="{style}"></div>')
        parts.append(f'<div class="page">page {number}</div>')
        pages.append(f'<div class="scan" id="page-{number}">{"".join(parts)}</div>')
    return f'<div class="scans" id="scans">{"".join(pages)}</div>' if pages else ""


def _box_map(result: dict[str, Any]) -> Sequence[Sequence[float]]:
    documents = result.get("documents") or [{}]
    return documents[0].get("box_map") or []


def _darker(color: str) -> str:
    """A pastel of ``PALETTE`` (hex without #) darkened for a line on a page image."""
    return "".join(f"{int(color[i:i + 2], 16) * 55 // 100:02x}" for i in (0, 2, 4))


def render_html(
    result: dict[str, Any],
    text: str,
    title: str = "",
    settings: str = "",
    pictures: dict[int, bytes] | None = None,
) -> str:
    """The boundary inspector page for ``inspect_file``'s ``result`` on ``text``; with
    ``pictures`` (a scan's pages) each page is drawn with the chunks' regions."""
    chunks = result["chunks"]
    length = len(text)
    marks: list[tuple[str, int, int]] = []
    rows: list[str] = []
    for n, item in enumerate(result.get("contains", [])):
        letter = _letter(n)
        spans = _occurrences(text, item["text"])
        marks.extend((letter, s, e) for s, e in spans)
        where = ", ".join(str(i) for i in item["chunks"])
        if item["chunks"]:
            verdict = f'<span class="ok">whole in chunk {where}</span>'
        elif spans:
            s, e = spans[0]
            cut = [
                str(i) for i, c in enumerate(chunks) if c["start_index"] < e and s < c["end_index"]
            ]
            verdict = f'<span class="no">—</span> cut across chunks {", ".join(cut) or "none"}'
        else:
            verdict = '<span class="no">not in the document</span>'
        coords = ", ".join(f"[{s}, {e})" for s, e in spans[:3]) or "—"
        rows.append(
            f"<tr><td><b>{letter}</b></td><td>{html.escape(item['text'])}</td>"
            f"<td>{coords}</td><td>{verdict}</td></tr>"
        )
    table = (
        '<table id="sentences"><tr><th></th><th>sentence</th><th>at</th><th>chunks</th></tr>'
        + "".join(rows)
        + "</table>"
        if rows
        else ""
    )
    sizes = [c["tokens"] for c in chunks]
    meta = (
        f"{length} characters · {len(chunks)} chunks"
        + (f" · sizes {min(sizes)}–{max(sizes)}" if sizes else "")
        + (f" · {html.escape(settings)}" if settings else "")
    )
    heading = html.escape(title or result.get("source", "document"))
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{heading} — chunk boundaries</title><style>{CSS}</style></head><body>"
        f'<h1>{heading}</h1><div class="meta">{meta}</div>'
        f"{_strip(chunks, marks, length)}{table}"
        f"{_scans(chunks, marks, pictures or {}, _box_map(result))}"
        f"{_document(text, chunks, marks)}"
        "</body></html>\n"
    )
