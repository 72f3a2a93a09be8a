"""Admission control for the query embedding: at most ``slots`` embeddings run at once in a
process, the others wait in arrival order (first come, first served).

Why: the model's intra-op threads already use every core for one query, so on a small machine
32 queries embedded at once do not finish sooner than one after another; they all finish late
together, and each one's lexical and Chroma work waits behind all of them. With a gate, a
query that got its slot finishes its embedding at full speed and goes on, so latencies follow
arrival order instead of all growing with the queue. The slot is handed to the oldest waiter
directly on release, so a newcomer never overtakes a thread already waiting.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from types import TracebackType


class FifoGate:
    """``with gate:`` holds one of ``slots`` places; waiters enter in the order they came."""

    def __init__(self, slots: int) -> None:
        if slots < 1:
            raise ValueError(f"a gate needs at least one slot, not {slots}")
        self.slots = slots
        self._lock = threading.Lock()
        self._free = slots
        self._waiting: deque[threading.Lock] = deque()

    def acquire(self) -> None:
        """Take a slot, waiting behind every thread that asked before."""
        with self._lock:
            if self._free and not self._waiting:
                self._free -= 1
                return
            turn = threading.Lock()
            turn.acquire()
            self._waiting.append(turn)
        turn.acquire()  # released by the holder that hands its slot to this thread

    def release(self) -> None:
        """Give the slot back: to the oldest waiter directly, else to the free ones."""
        with self._lock:
            if self._waiting:
                self._waiting.popleft().release()  # the slot passes on, never freed between
            else:
                self._free += 1

    def __enter__(self) -> FifoGate:
        self.acquire()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.release()

    @property
    def waiting(self) -> int:
        """How many threads wait for a slot now."""
        with self._lock:
            return len(self._waiting)


EMBEDDING_GATE = FifoGate(max(1, os.cpu_count() or 1))
