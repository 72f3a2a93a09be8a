"""OCR quality on a scanned set made from the Russian tuning sets (``loaders.scans.ocr``).

The text of the first ``--chars`` characters of ``--files`` files of each Russian tuning set
(docs_ru_deckhouse, prose_ru_ruslit; front matter, code, tables, shortcodes and Markdown marks
dropped: what a page shows) is rendered to page images at 300 dpi (Roboto, 11 pt body, 16 pt
bold headings; ``tests/scans.py``), a multi-page TIFF per file, and read back by the image
loader (Tesseract, ``rus+eng``, the real path: OCR, headings, paragraphs, cleaning). Degraded
copies: 200 dpi, JPEG quality 40, ±1.5° skew (alternating by page), the first page at 90°,
speckle (0.3 % of the pixels). Per copy: character error rate of the loaded text (``#`` marks
dropped, whitespace collapsed) against the source text, the share of the source's headings
that come out as Markdown headings (text within 10 % edit distance), seconds per page.

    .venv/bin/python -m bench.ocr [--files 2] [--chars 4000] [--out bench/ocr.json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from rapidfuzz.distance import Levenshtein

from bench.common import ROOT, SHARED
from tests.scans import degrade, render_page

SETS = {
    "docs_ru_deckhouse": ROOT / "bench" / "data" / "docs_ru_deckhouse" / "corpora",
    "prose_ru_ruslit": ROOT / "bench" / "data" / "prose_ru_ruslit" / "corpora",
    "clickhouse_ru": SHARED / "eval" / "clickhouse_ru" / "corpora",
}
PAGE_CHARS = 900  # text per rendered page (5.8 x 8.3 in, A5)
VARIANTS: dict[str, dict[str, Any]] = {
    "clean 300 dpi": {},
    "200 dpi": {"dpi": 200},
    "JPEG q40": {"jpeg": 40},
    "skew ±1.5°": {"skew": 1.5},
    "first page at 90°": {"rotate_first": 90},
    "speckle 0.3 %": {"speckle": 0.003},
}


def blocks_of(markdown: str, limit: int) -> list[str]:
    """What a page of ``markdown`` shows, as ``render_page`` blocks (``# `` headings), up to
    ``limit`` characters."""
    text = re.sub(r"\A---\n.*?\n---\n", "", markdown, flags=re.DOTALL)
    text = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    text = re.sub(r"\{\{<.*?>\}\}", "", text)
    out: list[str] = []
    size = 0
    for part in re.split(r"\n\s*\n", text):
        lines = [line for line in part.strip().splitlines() if not line.lstrip().startswith("|")]
        part = " ".join(line.strip() for line in lines).strip()
        if not part or part.startswith("<"):
            continue
        heading = re.match(r"#{1,6}\s+(.*)", part)
        part = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading.group(1) if heading else part)
        part = re.sub(r"[*_`]+", "", part)
        part = re.sub(r"^\s*(?:[-*+]|\d+\.)\s+", "", part).strip()
        if not part:
            continue
        if size + len(part) > limit and not heading:  # the last paragraph cut at a word
            part = part[: part.rfind(" ", 0, max(1, limit - size))].strip() or part
        out.append(f"# {part}" if heading else part)
        size += len(part)
        if size >= limit:
            break
    return out


def pages_of(blocks: list[str]) -> list[list[str]]:
    """``blocks`` cut into pages of about ``PAGE_CHARS`` characters (a long paragraph is cut
    at a word, its rest on the next page)."""
    pages: list[list[str]] = [[]]
    size = 0
    for block in blocks:
        while size + len(block) > PAGE_CHARS and not block.startswith("# "):
            cut = block.rfind(" ", 0, max(1, PAGE_CHARS - size))
            if cut <= 0:
                break
            pages[-1].append(block[:cut])
            pages.append([])
            size, block = 0, block[cut + 1 :]
        pages[-1].append(block)
        size += len(block)
    return [page for page in pages if page]


def plain(blocks: list[str]) -> str:
    return " ".join(" ".join(block.removeprefix("# ").split()) for block in blocks)


def page_image(blocks: list[str]) -> Any:
    """One page of ``blocks`` rendered at 300 dpi, A5 (``tests.scans.render_page``)."""
    return render_page(blocks, dpi=300, width_in=5.8, height_in=8.3)


def set_arguments(parser: argparse.ArgumentParser) -> None:
    """The set's options (``source_documents``), shared with ``bench.ocr_peers``."""
    parser.add_argument("--files", type=int, default=2, help="files per tuning set")
    parser.add_argument("--chars", type=int, default=4000, help="characters per file")
    parser.add_argument("--sets", default="docs_ru_deckhouse,prose_ru_ruslit")


def source_documents(args: argparse.Namespace) -> list[tuple[str, list[list[str]]]]:
    """``(set/name, its pages)`` of the first ``--files`` files of each of ``--sets``."""
    documents: list[tuple[str, list[list[str]]]] = []
    for name in args.sets.split(","):
        for path in sorted(SETS[name].glob("*.md"))[: args.files]:
            blocks = blocks_of(path.read_text(encoding="utf-8"), args.chars)
            documents.append((f"{name}/{path.stem}", pages_of(blocks)))
    return documents


def text_errors(got: str, want: str) -> int:
    """Edit distance of the read text (``#`` dropped, whitespace collapsed) to ``want``."""
    return Levenshtein.distance(" ".join(got.replace("#", " ").split()), want)


def cer_percent(errors: int, chars: int) -> float:
    return round(100 * errors / max(1, chars), 2)


def report(rows: list[dict[str, Any]], row: dict[str, Any], out: Path | None) -> None:
    """Print ``row``, add it to ``rows`` and write them all to ``out`` (when given)."""
    rows.append(row)
    print(json.dumps(row, ensure_ascii=False), flush=True)
    if out:
        out.write_text(json.dumps(rows, ensure_ascii=False, indent=1) + "\n")


def scanned(pages: list[list[str]], variant: dict[str, Any], path: Path) -> Path:
    dpi = variant.get("dpi", 300)
    images = []
    for index, blocks in enumerate(pages):
        page = page_image(blocks)
        skew = variant.get("skew", 0.0) * (1 if index % 2 == 0 else -1)
        rotate = variant.get("rotate_first", 0) if index == 0 else 0
        speckle, jpeg = variant.get("speckle", 0.0), variant.get("jpeg", 0)
        images.append(
            degrade(page, dpi=dpi, jpeg=jpeg, skew=skew, rotate=rotate, speckle=speckle, seed=index)
        )
    images[0].save(path, save_all=True, append_images=images[1:], compression="tiff_lzw")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    set_arguments(parser)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    from ragingest.loaders import loader_for

    documents = source_documents(args)
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["RAGINGEST_OCR_CACHE"] = str(Path(tmp) / "cache")  # every page read anew
        for label, variant in VARIANTS.items():
            errors = chars = pages = found = headings = 0
            seconds = 0.0
            for index, (_name, doc_pages) in enumerate(documents):
                tiff = scanned(doc_pages, variant, Path(tmp) / f"{index}.tiff")
                started = time.perf_counter()
                [document] = list(loader_for(tiff, tiff.parent).lazy_load())
                seconds += time.perf_counter() - started
                want = plain([b for page in doc_pages for b in page])
                errors += text_errors(document.page_content, want)
                chars += len(want)
                pages += len(doc_pages)
                got_headings = [
                    line.lstrip("# ") for line in document.page_content.splitlines()
                    if line.startswith("#")
                ]  # fmt: skip
                for page in doc_pages:
                    for block in page:
                        if block.startswith("# "):
                            headings += 1
                            title = block[2:]
                            found += any(
                                Levenshtein.normalized_distance(title, h) <= 0.1
                                for h in got_headings
                            )
            row = {
                "variant": label,
                "pages": pages,
                "characters": chars,
                "cer_percent": cer_percent(errors, chars),
                "headings": headings,
                "headings_recovered_percent": round(100 * found / max(1, headings), 1),
                "seconds_per_page": round(seconds / max(1, pages), 2),
            }
            report(results, row, args.out)


if __name__ == "__main__":
    main()
