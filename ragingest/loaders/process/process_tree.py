"""A process and every process below it, read from Linux's ``/proc``: their resident memory
(what the parser pool's memory bound watches) and killing the group a worker leads.
Elsewhere the readings are None and the bound falls back to the worker's own ``RLIMIT_AS``."""

from __future__ import annotations

import contextlib
import os
import signal


def resident_bytes(pid: int) -> int | None:
    """The resident memory of process ``pid`` (``/proc``), None where it can't be read."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (``/proc/PID/task/*/children``); [] where it can't be read."""
    found: list[int] = []
    todo = [pid]
    while todo:
        current = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{current}/task/{task}/children", "rb") as children:
                    kids = [int(k) for k in children.read().split()]
            except (OSError, ValueError):
                continue
            found += kids
            todo += kids
    return found


def tree_resident_bytes(pid: int) -> int | None:
    """The resident memory of ``pid`` and every process below it; None where ``pid``'s can't
    be read."""
    own = resident_bytes(pid)
    if own is None:
        return None
    return own + sum(resident_bytes(child) or 0 for child in descendants(pid))


def kill_group(pid: int) -> None:
    """Kill the process group ``pid`` leads (the worker and what it started), if any."""
    with contextlib.suppress(OSError):  # no such group (any more), or not ours
        os.killpg(pid, signal.SIGKILL)
