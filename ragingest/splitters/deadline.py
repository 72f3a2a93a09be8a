"""A time bound on splitting one file (``--file-timeout``), checked by the splitter's loops.

Parsing is bounded from outside (a worker process killed past the bound:
``loaders.process.bounded``); splitting runs in the caller's process, next to the model, so it is
bounded from inside: the split stage opens ``within(seconds)`` around a file, and the splitters'
loops over sections, merges and chunks call ``check()``, which raises ``SplitTimeout`` once the
bound has passed (the stage reports the file ``timeout``, naming it; the run goes on). ``check``
costs a clock read; outside ``within`` it does nothing. The bound is per thread of execution (a
context variable): engines splitting files in parallel threads each have their own.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

# (the monotonic time past which ``check`` raises, the bound in seconds)
_DEADLINE: ContextVar[tuple[float, float] | None] = ContextVar(
    "ragingest_split_deadline", default=None
)


class SplitTimeout(Exception):
    """Splitting ran past the bound ``within`` set (``seconds``)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"splitting took longer than {seconds:g} s")
        self.seconds = seconds


@contextmanager
def within(seconds: float | None) -> Iterator[None]:
    """``check()`` raises ``SplitTimeout`` once ``seconds`` have passed inside this block
    (None or <= 0: no bound). Blocks nest; the inner bound holds inside it."""
    if not seconds or seconds <= 0:
        yield
        return
    token = _DEADLINE.set((time.monotonic() + seconds, seconds))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def check() -> None:
    """Raise ``SplitTimeout`` when the current bound (``within``) has passed."""
    bound = _DEADLINE.get()
    if bound is not None and time.monotonic() > bound[0]:
        raise SplitTimeout(bound[1])
