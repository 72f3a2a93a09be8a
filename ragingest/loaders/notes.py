"""What a loader changed or lost in a file, for the run report (never stored in Chroma).

A loader adds a note to a document's metadata under ``schema.NOTES_HINT`` (``add_note``); with
``lost=True`` part of the file did not come through (a bad JSONL line, a damaged CSV row),
marked under ``schema.LOST_HINT``, and the report counts the file as partly failed. ``file_notes``
collects them over a file's documents, each note once, in order.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from langchain_core.documents import Document

from ragingest.schema import LOST_HINT, NOTES_HINT


def add_note(metadata: dict[str, Any], note: str, lost: bool = False) -> None:
    """Add ``note`` to the document's notes; ``lost`` marks it as having lost content."""
    metadata.setdefault(NOTES_HINT, []).append(note)
    if lost:
        metadata[LOST_HINT] = True


def note_file(documents: list[Document], note: str, lost: bool = False) -> None:
    """A note for the whole file, on its first document with text (the others may be empty
    and dropped)."""
    target = next((d for d in documents if d.page_content.strip()), None)
    if target is not None:
        add_note(target.metadata, note, lost)


def file_notes(documents: Iterable[Document]) -> tuple[list[str], bool]:
    """(the notes of a file's documents, each once; whether part of the file was lost)."""
    notes: dict[str, None] = {}
    lost = False
    for document in documents:
        notes.update(dict.fromkeys(document.metadata.get(NOTES_HINT) or ()))
        lost = lost or bool(document.metadata.get(LOST_HINT))
    return list(notes), lost


def summarize(problems: list[str], limit: int = 10) -> str:
    """``problems`` as one sentence part: the first ``limit``, then how many more."""
    shown = "; ".join(problems[:limit])
    return shown + (f"; and {len(problems) - limit} more" if len(problems) > limit else "")
