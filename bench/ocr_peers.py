"""OCR side by side: ragingest's PDF loader against OCRmyPDF + pypdf on the same scans.

The clean copy of ``bench/ocr.py``'s set (the same files, characters and pages), one scanned
PDF per file (300 dpi page images, no text layer; ``tests.scans.scan_pdf``). ragingest reads
each with its PDF loader (Tesseract ``rus+eng``, the OCR cache off); OCRmyPDF adds a text
layer (``-l rus+eng``, its defaults otherwise) that pypdf then extracts. Per tool: CER of the
text (``#`` dropped, whitespace collapsed) against the source, pages per minute (wall time,
the machine's cores shared with other jobs). OCRmyPDF is a bench-only install, kept out of
the project's environment and locks (it runs as a command):

    sudo apt-get install ghostscript
    python3 -m venv /tmp/ocrmypdf && /tmp/ocrmypdf/bin/pip install ocrmypdf
    .venv/bin/python -m bench.ocr_peers --ocrmypdf /tmp/ocrmypdf/bin/ocrmypdf [--out F]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
from pathlib import Path

from bench.ocr import (
    cer_percent,
    page_image,
    plain,
    report,
    set_arguments,
    source_documents,
    text_errors,
)
from tests.scans import scan_pdf


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    set_arguments(parser)
    parser.add_argument("--ocrmypdf", default="ocrmypdf", help="the ocrmypdf command")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    from pypdf import PdfReader

    from ragingest.loaders import loader_for

    def ours(pdf: Path, tmp: Path) -> str:
        return "\n".join(d.page_content for d in loader_for(pdf, pdf.parent).lazy_load())

    def ocrmypdf(pdf: Path, tmp: Path) -> str:
        out = tmp / f"{pdf.stem}.ocr.pdf"
        command = [args.ocrmypdf, "-q", "-l", "rus+eng", str(pdf), str(out)]
        subprocess.run(command, check=True)
        return "\n".join(page.extract_text() or "" for page in PdfReader(out).pages)

    tools = {"ragingest (Tesseract)": ours, "OCRmyPDF + pypdf": ocrmypdf}
    rows = []
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        os.environ["RAGINGEST_OCR_CACHE"] = str(tmp / "cache")  # every page read anew
        documents = []
        for label, pages in source_documents(args):
            images = [page_image(p) for p in pages]
            pdf = scan_pdf(tmp / f"{label.replace('/', '-')}.pdf", images)
            documents.append((pdf, plain([b for p in pages for b in p]), len(pages)))
        for tool, read in tools.items():
            errors = chars = pages = 0
            seconds = 0.0
            for pdf, want, count in documents:
                started = time.perf_counter()
                text = read(pdf, tmp)
                seconds += time.perf_counter() - started
                errors += text_errors(text, want)
                chars += len(want)
                pages += count
            row = {
                "tool": tool,
                "pages": pages,
                "characters": chars,
                "cer_percent": cer_percent(errors, chars),
                "pages_per_minute": round(60 * pages / max(seconds, 1e-9), 1),
            }
            report(rows, row, args.out)


if __name__ == "__main__":
    main()
