"""Work ahead of the consumer: an iterator run on a background thread, a bounded amount ahead.

The local engine loads and splits the next files while the run embeds and writes the files
before them (``engine_local``): the encoder runs with the GIL released (ONNX Runtime's
``run``), so splitting on the other core costs the encoder nothing, and it never waits for
the next group. Order is kept; an exception of the source is raised to the consumer where
the item it failed on would have come. Written by hand: ``concurrent.futures`` maps a whole
iterable ahead with no bound, and a queue of fixed length cannot bound by chunks.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")
JOIN_SECONDS = 5.0  # a source stopped mid-item (its parser killed) ends within this


class Prefetch(Generic[T]):
    """Iterates ``source`` on a thread, at most ``budget`` units (``size`` of each item) ahead
    of the consumer; one item always fits, however large. ``close`` stops the thread after
    the item it is producing (idempotent)."""

    def __init__(self, source: Iterator[T], budget: int, size: Callable[[T], int]) -> None:
        self._source, self._budget, self._size = source, max(1, budget), size
        self._items: deque[tuple[T, int]] = deque()
        self._pending = 0  # units produced, not yet taken
        self._done = self._stopped = False
        self._error: BaseException | None = None
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._produce, name="prefetch", daemon=True)
        self._thread.start()

    def _produce(self) -> None:
        try:
            for item in self._source:
                units = self._size(item)
                with self._changed:
                    while self._pending >= self._budget and not self._stopped:
                        self._changed.wait()
                    if self._stopped:
                        return
                    self._items.append((item, units))
                    self._pending += units
                    self._changed.notify_all()
        except BaseException as exc:  # handed to the consumer, raised where the item was due
            self._error = exc
        finally:
            with self._changed:
                self._done = True
                self._changed.notify_all()

    def __iter__(self) -> Iterator[T]:
        return self

    def __next__(self) -> T:
        with self._changed:
            while not self._items and not self._done:
                self._changed.wait()
            if self._items:
                item, units = self._items.popleft()
                self._pending -= units
                self._changed.notify_all()
                return item
            if self._error is not None:
                error, self._error = self._error, None
                raise error
            raise StopIteration

    def close(self) -> None:
        """Stop producing and drop what was produced; returns at once."""
        with self._changed:
            self._stopped = True
            self._items.clear()
            self._changed.notify_all()

    def join(self, timeout: float = JOIN_SECONDS) -> None:
        """Wait (at most ``timeout`` seconds) for the thread to end, after ``close``."""
        self.close()
        self._thread.join(timeout)
