"""The mass-delete guard: a run that would delete every source of a collection, or more than
``max_delete_share`` of them, stops before writing or deleting anything (``MassDeleteError``)
unless ``allow_mass_delete``. A root that is missing, empty (an unmounted share, a failed sync)
or mistyped looks exactly like every file having been deleted; a scheduled run must not empty
a knowledge base because of it.

Counted: the recorded sources (record-manager groups and file states) that this run's plan
neither parses nor finds unchanged. Not counted: a key that reappears under a root's name (the
run names more roots than before, so ``README.md`` became ``hr/README.md``: moved, not lost).
A first run has nothing recorded, and a ``--rebuild`` fills a fresh collection: neither is
affected.
"""

from __future__ import annotations

from collections.abc import Iterable

from ragingest.defaults import MAX_DELETE_SHARE
from ragingest.errors import MassDeleteError

_NAMED = 5  # sources named in the message


def doomed_sources(recorded: Iterable[str], planned: Iterable[str]) -> list[str]:
    """The recorded sources a run would delete: not in ``planned`` (kept by the run) and not
    merely moved under a root's name (module docstring)."""
    planned = set(planned)
    suffixes = {key.split("/", i)[-1] for key in planned for i in range(1, key.count("/") + 1)}
    return sorted(s for s in set(recorded) - planned if s not in suffixes)


def check_mass_delete(
    collection: str,
    doomed: list[str],
    recorded: int,
    max_share: float = MAX_DELETE_SHARE,
) -> None:
    """Raise ``MassDeleteError`` when deleting ``doomed`` of the ``recorded`` sources is every
    one of them or over ``max_share``; the message names some and says how to confirm."""
    if not doomed or not recorded:
        return
    share = len(doomed) / recorded
    if len(doomed) < recorded and share <= max_share:
        return
    names = ", ".join(doomed[:_NAMED])
    if len(doomed) > _NAMED:
        names += f" and {len(doomed) - _NAMED} more"
    why = "every one of them" if len(doomed) == recorded else f"over the limit of {max_share:.0%}"
    raise MassDeleteError(
        f"refused: this run would delete {len(doomed)} of the {recorded} sources of collection "
        f"{collection!r} ({share:.0%}, {why}): {names}. Is a folder missing, empty or "
        "unmounted, or a path mistyped? Nothing was changed. If the deletions are intended, "
        "run again with --allow-mass-delete (Python: allow_mass_delete=True) or a higher "
        "--max-delete-share (max_delete_share=...)"
    )


def check_share(max_share: float) -> float:
    """``max_share`` when it is a share (0 to 1), else a ``ValueError``."""
    if not 0.0 <= max_share <= 1.0:
        raise ValueError(f"max_delete_share must be between 0 and 1, got {max_share!r}")
    return max_share
