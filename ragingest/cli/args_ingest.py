"""The options of ``ingest``, which ``watch`` shares (``args`` builds the parsers)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragingest import defaults as d
from ragingest.cli.arg_groups import (
    add_file_args,
    add_split_args,
    add_store_args,
    non_negative,
    share,
)


def add_ingest_args(parser: argparse.ArgumentParser, paths: str = "+") -> None:
    """The options of ``ingest``, shared by ``watch``."""
    parser.add_argument(
        "--retry-failed",
        action="store_true",
        help="parse again the files that failed past a bound (--file-timeout, "
        "--file-memory-mb, size, --max-chunks-per-file) with the same content (default: "
        "reported as failed, not tried again until they change)",
    )
    parser.add_argument(
        "--max-chunks-per-file",
        type=non_negative,
        default=d.MAX_CHUNKS_PER_FILE,
        metavar="N",
        help="report a file that splits into more chunks than this as failed instead of "
        f"embedding it for an hour (default {d.MAX_CHUNKS_PER_FILE}; 0: no bound)",
    )
    parser.add_argument(
        "paths",
        nargs=paths,
        metavar="PATH",
        help="files or folders (with none and no --loader: the [[sources]] of ./.ragingest.toml)"
        if paths == "*"
        else "files or folders",
    )
    add_store_args(parser, backend=True)
    add_split_args(parser)
    parser.add_argument(
        "--include",
        action="append",
        default=[],
        metavar="GLOB",
        help="only files matching (repeatable), e.g. '*.md'",
    )
    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="skip files matching (repeatable)",
    )
    add_file_args(parser)
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar (there is one only when stderr is a terminal)",
    )
    group = parser.add_argument_group("re-indexing")
    group.add_argument(
        "--rebuild",
        action="store_true",
        help="when the model or splitter settings differ from the collection's, rebuild it "
        "into a new collection swapped in when complete (without it such a run is refused)",
    )
    group.add_argument(
        "--allow-mass-delete",
        action="store_true",
        help="let this run delete every source of the collection, or more than "
        "--max-delete-share of them (without it such a run is refused, exit 7)",
    )
    group.add_argument(
        "--max-delete-share",
        type=share,
        default=d.MAX_DELETE_SHARE,
        metavar="FRACTION",
        help="the share of the collection's sources a run may delete "
        f"(default {d.MAX_DELETE_SHARE}); "
        "a run that would delete more, or all, is refused before it changes anything",
    )
    group.add_argument(
        "--wait",
        action="store_true",
        help="wait for another run writing the collection instead of failing (exit 3)",
    )
    group.add_argument(
        "--write-batch",
        dest="write_batch",
        type=non_negative,
        default=d.WRITE_BATCH_SIZE,
        metavar="N",
        help=f"chunks written per batch, whole files (default {d.WRITE_BATCH_SIZE})",
    )
    group.add_argument(
        "--batch-size",  # the flag's first name, kept working: scripts pass it
        dest="write_batch",
        type=non_negative,
        default=argparse.SUPPRESS,
        action=OldName,
        metavar="N",
        help="deprecated: --write-batch (the model's batch is not this)",
    )
    group.add_argument(
        "--run-log",
        type=Path,
        metavar="FILE",
        help="append one JSON line per run here (default: ragingest_runs.jsonl in --persist-dir)",
    )
    engine = parser.add_argument_group("engine")
    engine.add_argument(
        "--engine",
        choices=d.ENGINES,
        default=d.ENGINE,
        help="local (default) or ray: load/split as Ray Data map tasks, embed in an actor pool",
    )
    engine.add_argument(
        "--ray-address",
        metavar="HOST:PORT",
        help="a running Ray cluster (default: start a local Ray runtime on 127.0.0.1)",
    )
    engine.add_argument(
        "--ray-actors",
        type=non_negative,
        default=None,
        metavar="N",
        help="embedding actors, 0.5 CPU each (default: one per CPU of the cluster; at most what "
        "leaves a split task its half CPU)",
    )


class OldName(argparse.Action):
    """A flag's deprecated name: stores as its new one does, and says on stderr which that is
    (a ``DeprecationWarning`` would not show in a command's output)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        new = "--" + self.dest.replace("_", "-")
        print(f"ragingest: {option_string} is deprecated: it is {new}", file=sys.stderr)
        setattr(namespace, self.dest, values)
