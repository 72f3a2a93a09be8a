"""Support tickets: one chunk per ticket (the loader makes one document per ticket
with its id, status and dates as metadata); a ticket over the model's limit is split between
messages, each piece embedded after the ticket's heading."""

from __future__ import annotations

from ragingest.splitters.structure import Structure
from ragingest.splitters.units import Unit, UnitSplitter, trim


class TicketSplitter(UnitSplitter):
    """Ticket exports: the whole ticket is one unit, its '# ' heading leads every piece."""
    strategy = "ticket"

    def units(self, text: str, structure: Structure) -> list[Unit]:
        """The ticket as one unit (none for blank text)."""
        start, end = trim(text, 0, len(text))
        if end <= start:
            return []
        heading = next((h.title for h in structure.headings if h.level == 1), "")
        return [Unit(start, end, (), heading)]
