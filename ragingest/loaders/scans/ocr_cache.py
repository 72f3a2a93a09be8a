"""The OCR cache: what Tesseract read from a page image, kept by the image's bytes and the OCR
settings, so re-ingesting a scan (``--rebuild``, another model or splitter) never OCRs it again.

Where: ``$RAGINGEST_OCR_CACHE``, else ``$XDG_CACHE_HOME/ragingest/ocr`` (``~/.cache/...``).
Entries are JSON (data, never code), one file per page, written atomically; an unreadable or
foreign entry is a miss. A cache that can't be written is skipped (OCR still works).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from ragingest.loaders.scans.ocr_types import OcrLine, OcrPage

_VERSION = 4  # 4: a page Tesseract read sideways is read again turned upright


def cache_dir() -> Path:
    """The folder the OCR cache lives in."""
    configured = os.environ.get("RAGINGEST_OCR_CACHE")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ragingest" / "ocr"


def _entry(image: bytes, key: str) -> Path:
    digest = hashlib.sha256(image)
    digest.update(b"\x1f" + key.encode("utf-8"))
    name = digest.hexdigest()
    return cache_dir() / name[:2] / f"{name}.json"


def cached(image: bytes, key: str) -> OcrPage | None:
    """The page read before from ``image`` with settings ``key``, or None."""
    try:
        data: dict[str, Any] = json.loads(_entry(image, key).read_text(encoding="utf-8"))
        if data.get("version") != _VERSION:
            return None
        lines = [
            OcrLine(
                str(line["text"]),
                tuple(line["box"]),
                [tuple(w) for w in line["words"]],
                [float(c) for c in line["confidences"]],
                size=float(line["size"]),
                bold=bool(line["bold"]),
                paragraph=int(line["paragraph"]),
            )
            for line in data["lines"]
        ]
        return OcrPage(int(data["width"]), int(data["height"]), int(data["rotation"]), lines)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def store(image: bytes, key: str, page: OcrPage) -> None:
    """Keep ``page`` as what ``image`` reads with settings ``key`` (best effort)."""
    data = {
        "version": _VERSION,
        "width": page.width,
        "height": page.height,
        "rotation": page.rotation,
        "lines": [
            {
                "text": line.text,
                "box": list(line.box),
                "words": [list(w) for w in line.words],
                "confidences": line.confidences,
                "size": line.size,
                "paragraph": line.paragraph,
                "bold": line.bold,
            }
            for line in page.lines
        ],
    }
    path = _entry(image, key)
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump(data, out, ensure_ascii=False)
            os.replace(temporary, path)
        except OSError:
            Path(temporary).unlink(missing_ok=True)

