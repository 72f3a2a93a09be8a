"""The run report: what happened to every file, and the totals."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ragingest.errors import EXIT_FILES_FAILED, EXIT_OK
from ragingest.loaders.walk import SkippedFile, printable


@dataclass
class FileResult:
    """What happened to one file in a run: its status, chunk count, error and cleaning counts."""
    path: str
    # "ok" | "partial" (in, but parts lost: ``notes`` say which) | "failed" | "unchanged" |
    # "unsupported" | "skipped" (not read: not a regular file, a symlink out of the roots, ...)
    status: str
    chunks: int = 0
    error: str = ""
    kind: str = ""  # the error or skip kind (ragingest.errors, loaders.walk), empty when ok
    cleaning: dict[str, int] = field(default_factory=dict)  # what cleaning removed (non-zero)
    notes: list[str] = field(default_factory=list)  # what the loader changed or lost, and why

    def __post_init__(self) -> None:
        self.cleaning = {k: v for k, v in (self.cleaning or {}).items() if v}
        self.path, self.error = printable(self.path), printable(self.error)
        self.notes = [printable(n) for n in self.notes or []]

    @classmethod
    def skipped(cls, entry: SkippedFile) -> FileResult:
        """The result of a file the walk skipped (not read), with the walk's reason and kind."""
        return cls(entry.source, "skipped", error=entry.reason, kind=entry.kind)


@dataclass
class RunReport:
    """The outcome of one ingest run: per-file results and the chunk, embedding and time totals."""
    files: list[FileResult] = field(default_factory=list)
    added: int = 0
    skipped: int = 0
    deleted: int = 0
    updated: int = 0
    embeddings_computed: int = 0
    seconds: float = 0.0
    embeddings_cached: int = 0  # distinct texts found in the embedding cache
    files_deleted: int = 0  # sources gone from the roots, their chunks deleted
    collection: str = ""  # the physical Chroma collection written
    rebuilt: bool = False  # a --rebuild was swapped in by this run
    error: str = ""  # why the run stopped, when it did

    @property
    def changed(self) -> int:
        """Files parsed this run (new or modified)."""
        return sum(1 for f in self.files if f.status in ("ok", "partial", "failed"))

    @property
    def unchanged(self) -> int:
        """Files left as they were (unchanged since the last run)."""
        return sum(1 for f in self.files if f.status == "unchanged")

    @property
    def cleaning(self) -> dict[str, int]:
        """Cleaning counts summed over the files (loaders.cleaning.COUNTERS)."""
        total: dict[str, int] = {}
        for result in self.files:
            for key, value in result.cleaning.items():
                total[key] = total.get(key, 0) + value
        return total

    @property
    def failed(self) -> int:
        """Files that failed (nothing of them ingested)."""
        return sum(1 for f in self.files if f.status == "failed")

    @property
    def partial(self) -> int:
        """Files ingested with parts lost (their notes say which)."""
        return sum(1 for f in self.files if f.status == "partial")

    @property
    def files_skipped(self) -> int:
        """Files seen and not ingested by design (an unsupported format, a FIFO, a link out
        of the root); ``error`` says why."""
        return sum(1 for f in self.files if f.status in ("skipped", "unsupported"))

    @property
    def exit_code(self) -> int:
        """The command's exit status: 1 when a file failed or was ingested only in part, else 0."""
        return EXIT_FILES_FAILED if self.failed or self.partial else EXIT_OK

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data, the derived counts included."""
        data = asdict(self)
        data["failed"] = self.failed
        data["partial"] = self.partial
        data["files_skipped"] = self.files_skipped
        data["changed"] = self.changed
        data["unchanged"] = self.unchanged
        data["cleaning"] = self.cleaning
        return data

    def write(self, path: str | Path) -> None:
        """The JSON report; any text that is not valid UTF-8 is written escaped, never fatal."""
        text = json.dumps(self.to_dict(), ensure_ascii=False, indent=2) + "\n"
        Path(path).write_text(text, encoding="utf-8", errors="backslashreplace")

    def summary(self) -> str:
        """The report as the lines the command prints."""
        ok = sum(1 for f in self.files if f.status in ("ok", "partial", "unchanged"))
        chunks = sum(f.chunks for f in self.files)
        gone = f" ({self.files_deleted} files gone)" if self.files_deleted else ""
        lines = [
            f"files: {ok} ingested ({self.unchanged} unchanged, not parsed), {self.failed} "
            f"failed, {self.partial} partly, {self.files_skipped} skipped, {len(self.files)} "
            f"seen; chunks: {chunks}",
            f"index: {self.added} added, {self.skipped} unchanged, {self.deleted} deleted{gone}; "
            f"{self.embeddings_computed} embeddings computed ({self.embeddings_cached} cached) "
            f"in {self.seconds:.1f} s",
        ]
        if self.cleaning:
            removed = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in self.cleaning.items())
            lines.append(f"cleaning removed: {removed}")
        if self.rebuilt:
            lines.append(f"rebuilt: Chroma collection {self.collection} now serves it")
        for f in self.files:
            if f.status in ("failed", "skipped", "unsupported"):
                label = "FAILED" if f.status == "failed" else "SKIPPED"
                lines.append(f"{label} {f.path}: {f.error}")
            lines += [f"{'PARTLY ' if f.status == 'partial' else ''}NOTE {f.path}: {note}"
                      for note in f.notes]  # fmt: skip
        return "\n".join(lines)
