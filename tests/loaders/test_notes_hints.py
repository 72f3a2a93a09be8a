"""A loader's notes ride in keys the schema lists: ``schema.LOADER_HINTS`` names every
underscore key a loaded ``Document`` may carry, the notes' included."""

from __future__ import annotations

from typing import Any

from ragingest.loaders.notes import add_note, file_notes
from ragingest.schema import LOADER_HINTS


def test_a_note_and_a_loss_use_only_listed_hint_keys() -> None:
    metadata: dict[str, Any] = {"source": "a.csv"}
    add_note(metadata, "row 3 damaged", lost=True)
    added = set(metadata) - {"source"}
    assert added and added <= set(LOADER_HINTS)


def test_file_notes_reads_what_add_note_wrote() -> None:
    from langchain_core.documents import Document

    first, second = Document(page_content="a"), Document(page_content="b")
    add_note(first.metadata, "kept")
    add_note(second.metadata, "kept")
    add_note(second.metadata, "lost a line", lost=True)
    assert file_notes([first, second]) == (["kept", "lost a line"], True)
