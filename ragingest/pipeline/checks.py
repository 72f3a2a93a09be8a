"""What a run checks and says about its inputs before and while it reads them: the store
folder, the configs inside the roots, files gone mid-run, files that failed before."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path

from ragingest.config import ConfigError, root_config
from ragingest.errors import PersistDirError
from ragingest.pipeline.plan import FileTask
from ragingest.pipeline.report import RunReport

log = logging.getLogger(__name__)


def require_directory(persist_dir: str | Path) -> None:
    """Refuse a ``persist_dir`` that exists and is not a folder (``PersistDirError``)."""
    path = Path(persist_dir)
    if path.exists() and not path.is_dir():
        raise PersistDirError(
            f"--persist-dir {path} is a file, not a folder: give a folder (it is created when "
            "missing)"
        )


def require_output_folder(
    path: str | Path | None, flag: str, persist_dir: str | Path | None = None
) -> None:
    """Refuse, before any work, a file to write (``--report``, ``--run-log``) whose folder does
    not exist or that is a folder (``PersistDirError``, a usage error): no folder is made for
    it, so a typo never creates a tree (at ``/`` or anywhere). The ``persist_dir`` is the one
    folder that may be missing: the run makes it."""
    if path is None or str(path) == "":
        return
    target = Path(path)
    if target.is_dir():
        raise PersistDirError(f"{flag} {target} is a folder: give a file name in it")
    folder = target.parent
    made_by_run = persist_dir is not None and os.path.abspath(folder) == os.path.abspath(
        persist_dir
    )
    if not folder.is_dir() and not made_by_run:
        raise PersistDirError(
            f"{flag} {target}: the folder {folder} does not exist; create it first (no folder "
            "is made for this file)"
        )


def note_root_configs(paths: Sequence[str | Path], report: RunReport) -> None:
    """Say (log and report) what each root's ``.ragingest.toml`` set that a config inside an
    ingested folder may not (sources, loaders, paths): it is ignored."""
    for path in paths:
        try:
            note = root_config(path).ignored_note() if Path(path).is_dir() else ""
        except ConfigError as exc:  # each file of the root names it when it is split
            note = str(exc)
        if note:
            log.warning("%s", note)
            report.notes.append(note)


FAILED_BEFORE = (
    "failed before with the same content and was not tried again (the reason is under "
    '"failures" in the run log line of the run that failed it); --retry-failed tries it now, '
    "and it is tried when it changes"
)


def vanished(task: FileTask) -> bool:
    """Whether the task's file is gone (deleted after the walk saw it)."""
    return task.path is not None and not os.path.lexists(task.path)
