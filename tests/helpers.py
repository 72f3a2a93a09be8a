"""``ingest_cli``: the ``ragingest ingest`` command line most tests run, in process."""

from __future__ import annotations

from pathlib import Path

from ragingest.cli.main import main


def ingest_cli(
    corpus: str | Path | None, persist: str | Path, collection: str, *extra: str | Path
) -> int:
    """``ragingest ingest CORPUS --persist-dir PERSIST --collection COLLECTION --no-progress
    EXTRA...`` through ``cli.main.main``; its exit code. ``corpus`` None: no path (the sources
    come from ``--loader`` in ``extra`` or ``[[sources]]``)."""
    paths = [] if corpus is None else [str(corpus)]
    argv = ["ingest", *paths, "--persist-dir", str(persist), "--collection", collection]
    return main([*argv, "--no-progress", *(str(e) for e in extra)])
