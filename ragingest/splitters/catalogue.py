"""Catalogues: one chunk per card (the loader makes one document per row, its
``field: value`` lines as text and its numeric columns as metadata); a card over the size
limit is split between lines, each piece embedded after the card's title."""

from __future__ import annotations

from ragingest.splitters.structure import Structure
from ragingest.splitters.units import Unit, UnitSplitter, trim


class CatalogueSplitter(UnitSplitter):
    """Catalogue cards: each card is one unit, its first line leads every piece."""
    strategy = "catalogue"

    def units(self, text: str, structure: Structure) -> list[Unit]:
        """The card as one unit led by its first line (none for blank text)."""
        start, end = trim(text, 0, len(text))
        if end <= start:
            return []
        first = text[start:end].split("\n", 1)[0].strip()
        return [Unit(start, end, (), first)]
