"""``pipeline.prefetch.Prefetch``: a source run on a thread, in order, a bounded amount ahead."""

from __future__ import annotations

import threading

import pytest

from ragingest.pipeline.prefetch import Prefetch


def test_items_come_in_the_source_order():
    assert list(Prefetch(iter(range(100)), budget=7, size=lambda _: 1)) == list(range(100))


def test_the_thread_stays_within_the_budget_of_units_ahead():
    produced: list[int] = []
    gate = threading.Event()

    def source():
        for i in range(20):
            produced.append(i)
            if i == 3:
                gate.set()
            yield i

    ahead = Prefetch(source(), budget=6, size=lambda item: 2)  # 3 items of 2 units fit
    gate.wait(5)
    ahead.join(0.2)  # let it run as far as it may, then stop it
    # 3 queued, the 4th produced and waiting for room when it was stopped
    assert produced == [0, 1, 2, 3]


def test_an_item_larger_than_the_budget_still_passes():
    assert list(Prefetch(iter([10, 1, 10]), budget=2, size=lambda item: item)) == [10, 1, 10]


def test_the_source_error_is_raised_where_its_item_was_due():
    def source():
        yield 1
        yield 2
        raise KeyError("file 3")

    ahead = Prefetch(source(), budget=10, size=lambda _: 1)
    assert [next(ahead), next(ahead)] == [1, 2]
    with pytest.raises(KeyError, match="file 3"):
        next(ahead)
    assert list(ahead) == []


def test_close_stops_the_thread_and_drops_what_was_ahead():
    ahead = Prefetch(iter(range(1000)), budget=4, size=lambda _: 1)
    assert next(ahead) == 0
    ahead.join()
    assert not ahead._thread.is_alive()
    assert list(ahead) == []
