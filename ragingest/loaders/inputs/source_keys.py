"""The ``source`` key of a found file, and names made printable.

The ``source`` key (``source_bases``) is unique across the run's roots and stable for a run
of one root: with one root it is the path relative to that folder (a file given directly: its
name), as it always was; with several, each root's keys start with the root's own name
(``hr/README.md``, ``it/README.md``), lengthened by its parent folders' names where two roots
would otherwise share keys (``a/docs/x.md``, ``b/docs/x.md``). Names that are not valid UTF-8
come from ``os`` surrogate-escaped; ``printable`` shows them with ``\\xNN`` escapes so
reports, metadata and the databases always get valid text.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path


def printable(text: str) -> str:
    """``text`` with undecodable bytes of a file name (surrogate escapes) as ``\\xNN``."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def source_of(path: Path, root: Path | None) -> str:
    """The ``source`` of ``path``: relative to ``root`` (POSIX), its name when outside."""
    if root is None:
        return printable(path.name)
    try:
        relative = path.relative_to(root).as_posix()
    except ValueError:
        try:  # an absolute base (``source_bases``) of a relative path
            relative = Path(os.path.abspath(path)).relative_to(os.path.abspath(root)).as_posix()
        except ValueError:
            relative = path.name
    return printable(relative)


def _label(parts: tuple[str, ...], depth: int) -> tuple[str, ...]:
    return parts[len(parts) - depth :]


def _clashes(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Whether keys under labels ``a`` and ``b`` could be equal: one starts the other."""
    return a[: len(b)] == b or b[: len(a)] == a


def source_bases(paths: Sequence[str | Path]) -> list[Path]:
    """The folder each given path's ``source`` keys are relative to (module docstring).

    One path: the folder itself (a file: its folder), so a one-root collection keeps its keys.
    Several: the ancestor that makes each path's label (its last ``depth`` components, a
    folder's keys being ``label/relative``, a file's its label) start no other path's label,
    each label as short as that allows (at least the path's own name). Absolute paths."""
    given = [Path(p) for p in paths]
    if len(given) == 1:
        only = given[0]
        return [only if only.is_dir() else only.parent]
    absolute = [Path(os.path.abspath(p)) for p in given]
    parts = [p.parts[1:] for p in absolute]  # without the anchor ("/")
    depth = [min(1, len(p)) for p in parts]
    while True:
        clashing = {
            k
            for i in range(len(given))
            for j in range(i + 1, len(given))
            if _clashes(_label(parts[i], depth[i]), _label(parts[j], depth[j]))
            for k in (i, j)
        }
        grow = [i for i in clashing if depth[i] < len(parts[i])]
        if not grow:  # the same path given twice: nothing tells them apart
            break
        for i in grow:
            depth[i] += 1
    return [path.parents[d - 1] if d else path for path, d in zip(absolute, depth, strict=True)]
