"""The pace of a run on its progress bar: chunks split so far, and the time a file's chunks
will take to embed and write, estimated from the writes so far, shown before that file is
embedded (a long file is announced, not silently taken an hour over)."""

from __future__ import annotations


class Pace:
    """Chunks split so far and the seconds a file's chunks will take to embed and write, at
    the pace of the writes so far, on the progress bar (before that file is embedded)."""

    def __init__(self) -> None:
        self.chunks = 0
        self.written = 0
        self.seconds = 0.0

    def wrote(self, chunks: int, seconds: float) -> None:
        self.written += chunks
        self.seconds += seconds

    def estimate(self, chunks: int) -> str:
        """'N chunks, ~T s' (the time once a write has shown the pace)."""
        if not self.written or self.seconds <= 0:
            return f"{chunks} chunks"
        return f"{chunks} chunks, ~{chunks * self.seconds / self.written:.0f} s"

    def show(self, bar: object, source: str, chunks: int) -> None:
        self.chunks += chunks
        if hasattr(bar, "set_postfix_str"):
            bar.set_postfix_str(f"{self.chunks} chunks; {source}: {self.estimate(chunks)}")
