"""Retrieval on an OCR'd corpus against the same corpus born digital (``loaders.scans.ocr``).

The files of the docs_ru_deckhouse tuning set (``--files``: some of them; ~3 min on 2 cores
for all 11, 108 pages) are reduced to what a page shows (``bench.ocr.blocks_of``: no code, tables or
Markdown marks), rendered to 300 dpi page images (``bench.ocr.scanned``, clean) and read back
by the image loader (Tesseract, the real path). Two corpora: the page text as it was rendered
(born digital: the headings as Markdown, the paragraphs as written) and the loader's OCR text.
Each question's references are located in both by alignment (rapidfuzz
``partial_ratio_alignment``, score >= 80: OCR errors and dropped marks don't lose a match); a
question whose references aren't all found in both (they were in code or a table) is left
out of both. Both corpora go through ``ragingest.evaluate`` (default heading-first config, the
default model, k = 5); the numbers: R@5 and MRR of each, the questions kept, OCR seconds.

    .venv/bin/python -m bench.ocr_retrieval [--files a,b,...] [--out bench/ocr_retrieval.json]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import tempfile
import time
from pathlib import Path

from rapidfuzz import fuzz

from bench.ocr import SETS, blocks_of, pages_of, scanned
from tests.scans import render_page

SET = "docs_ru_deckhouse"
MATCH = 80.0  # partial_ratio score a located reference needs


def _fits(block: str) -> bool:
    """A block a page can show: no unbreakable run (a long path or hash) wider than the page,
    no heading longer than a few lines."""
    return max(map(len, block.split()), default=0) <= 60 and not (
        block.startswith("# ") and len(block) > 200
    )


def _fitted(page: list[str]) -> list[list[str]]:
    """``page`` as pages that fit the sheet (many short blocks take more room than their
    characters say): halved until each fits."""
    try:
        render_page(page, dpi=300, width_in=5.8, height_in=8.3)
        return [page]
    except ValueError:
        if len(page) == 1:  # a block no page holds (a long unbroken run): left out
            print(f"left out (too long for a page): {page[0][:60]}...", flush=True)
            return []
        half = len(page) // 2
        return _fitted(page[:half]) + _fitted(page[half:])


def locate(needle: str, text: str) -> tuple[int, int] | None:
    """Where ``needle`` (a reference's content) lies in ``text``, by alignment; None if not."""
    needle = " ".join(needle.replace("`", "").replace("**", "").split())
    found = fuzz.partial_ratio_alignment(needle, text, score_cutoff=MATCH)
    if found is None or found.dest_end <= found.dest_start:
        return None
    return found.dest_start, found.dest_end


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", default="", help="corpus ids of docs_ru_deckhouse (all)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    from ragingest.evaluate.configs import DEFAULT
    from ragingest.evaluate.data import Question
    from ragingest.evaluate.metrics import Reference
    from ragingest.evaluate.runner import evaluate
    from ragingest.loaders import loader_for

    names = args.files.split(",") if args.files else sorted(p.stem for p in SETS[SET].glob("*.md"))
    digital: dict[str, str] = {}
    ocred: dict[str, str] = {}
    pages = 0
    ocr_seconds = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["RAGINGEST_OCR_CACHE"] = str(Path(tmp) / "cache")  # every page read anew
        for name in names:
            markdown = (SETS[SET] / f"{name}.md").read_text(encoding="utf-8")
            blocks = [b for b in blocks_of(markdown, 10**9) if _fits(b)]
            digital[name] = "\n\n".join(blocks) + "\n"
            doc_pages = [part for page in pages_of(blocks) for part in _fitted(page)]
            tiff = scanned(doc_pages, {}, Path(tmp) / f"{name}.tiff")
            started = time.perf_counter()
            [document] = list(loader_for(tiff, tiff.parent).lazy_load())
            ocr_seconds += time.perf_counter() - started
            ocred[name] = document.page_content
            pages += len(doc_pages)
            print(f"{name}: {len(doc_pages)} pages OCR'd", flush=True)

    asked = 0
    kept: dict[str, list[Question]] = {"digital": [], "ocr": []}
    with (SETS[SET].parent / "questions.csv").open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if row["corpus_id"] not in names:
                continue
            asked += 1
            found: dict[str, list[Reference]] = {"digital": [], "ocr": []}
            for corpus, texts in (("digital", digital), ("ocr", ocred)):
                for ref in json.loads(row["references"]):
                    span = locate(ref["content"], texts[row["corpus_id"]])
                    if span is not None:
                        found[corpus].append(Reference(row["corpus_id"], *span))
            total = len(json.loads(row["references"]))
            if all(len(refs) == total for refs in found.values()):
                for corpus, refs in found.items():
                    kept[corpus].append(
                        Question(row["question"], row["corpus_id"], tuple(refs), row["kind"])
                    )
    result = {
        "set": SET,
        "files": len(names),
        "pages": pages,
        "ocr_seconds_per_page": round(ocr_seconds / max(1, pages), 2),
        "questions": asked,
        "questions_located_in_both": len(kept["ocr"]),
    }
    for corpus, texts in (("digital", digital), ("ocr", ocred)):
        evaluation = evaluate(texts, kept[corpus], [DEFAULT])
        scores = evaluation.results[0].scores
        result[f"{corpus}_recall_at_5"] = round(100 * scores["recall_at_k"][0], 1)
        result[f"{corpus}_mrr"] = round(scores["mrr"][0], 3)
    print(json.dumps(result, ensure_ascii=False), flush=True)
    if args.out:
        args.out.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n")


if __name__ == "__main__":
    main()
