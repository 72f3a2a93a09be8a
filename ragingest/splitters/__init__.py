"""Splitters: a normalized document in, ``Chunk``s with exact offsets out."""

from ragingest.chunk import Chunk
from ragingest.splitters.fixed import FixedSizeSplitter
from ragingest.splitters.heading_first import HeadingFirstSplitter
from ragingest.splitters.measure import Measure

__all__ = ["Chunk", "FixedSizeSplitter", "HeadingFirstSplitter", "Measure"]
