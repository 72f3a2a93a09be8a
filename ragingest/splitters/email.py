"""E-mail: one chunk per message (the loader already removed quotes and the
signature); a long message is split by paragraphs, with overlap, each piece embedded after the
subject."""

from __future__ import annotations

from ragingest.splitters.structure import Structure
from ragingest.splitters.units import Unit, UnitSplitter, trim


class EmailSplitter(UnitSplitter):
    """E-mails: the whole message is one unit, its subject leads every piece, long ones cut with
    overlap."""
    strategy = "email"
    overlap = True

    def units(self, text: str, structure: Structure) -> list[Unit]:
        """The message as one unit led by its '# ' subject (none for blank text)."""
        start, end = trim(text, 0, len(text))
        if end <= start:
            return []
        subject = next((h.title for h in structure.headings if h.level == 1), "")
        return [Unit(start, end, (), subject)]
