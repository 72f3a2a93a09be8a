"""The run report: what happened to every file, and the totals."""

from __future__ import annotations

import json
import unicodedata
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ragingest.errors import (
    EXIT_FILES_FAILED,
    EXIT_OK,
    EXIT_REFUSED,
    MassDeleteError,
    RagIngestError,
)
from ragingest.loaders.inputs.source_keys import printable
from ragingest.loaders.inputs.walk import SkippedFile


@dataclass
class FileResult:
    """What happened to one file in a run: its status, chunk count, error and cleaning counts."""
    path: str
    # "ok" | "partial" (in, but parts lost: ``notes`` say which) | "failed" | "unchanged" |
    # "unsupported" | "skipped" (not read: not a regular file, a symlink out of the roots, ...)
    # | "deleted" (seen by the walk, gone before it was read: its chunks go)
    status: str
    chunks: int = 0
    error: str = ""
    kind: str = ""  # the error or skip kind (ragingest.errors, loaders.walk), empty when ok
    cleaning: dict[str, int] = field(default_factory=dict)  # what cleaning removed (non-zero)
    notes: list[str] = field(default_factory=list)  # what the loader changed or lost, and why
    # what cleaning removed: {"rule", "start", "end", "page", "text"} each (loaders.cleaning.rules)
    removed: list[dict[str, object]] = field(default_factory=list)
    copies: list[str] = field(default_factory=list)  # the other files of its group of copies

    def __post_init__(self) -> None:
        self.cleaning = {k: v for k, v in (self.cleaning or {}).items() if v}
        self.path, self.error = printable(self.path), printable(self.error)
        self.notes = [printable(n) for n in self.notes or []]

    @classmethod
    def skipped(cls, entry: SkippedFile) -> FileResult:
        """The result of a file the walk skipped (not read), with the walk's reason and kind."""
        return cls(entry.source, "skipped", error=entry.reason, kind=entry.kind)


class FilesFailedError(RagIngestError):
    """Files of a run failed or came in partly (``RunReport.raise_for_failures``, ``strict``);
    the others went in. ``files``: their ``FileResult``s, each naming the reason."""

    def __init__(self, files: list[FileResult]) -> None:
        self.files = files
        lines = [f"{f.path}: {f.error or '; '.join(f.notes)}" for f in files]
        super().__init__(f"{len(files)} file(s) failed or came in partly: " + "; ".join(lines))


@dataclass
class DeletedSource:
    """A source recorded before and not seen by this run: its chunks were deleted."""

    path: str
    chunks: int

    def __post_init__(self) -> None:
        self.path = printable(self.path)


SUMMARY_DELETED_SHOWN = 20  # the summary names this many deleted sources; the JSON all
SUMMARY_REMOVED_SHOWN = 20  # ... this many files' removals and groups of copies


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
    deleted_sources: list[DeletedSource] = field(default_factory=list)  # which ones
    collection: str = ""  # the physical Chroma collection written
    rebuilt: bool = False  # a --rebuild was swapped in by this run
    error: str = ""  # why the run stopped, when it did
    notes: list[str] = field(default_factory=list)  # about the run, not one file (see summary)
    refused: str = ""  # why the run refused to change anything (``pipeline.deletes``), when it did
    access_policy: str = ""  # where the run's access policy came from ("" when none)
    access_changed: list[str] = field(default_factory=list)  # readers rewritten in place
    unreadable: list[str] = field(default_factory=list)  # no rule grants a reader: nobody reads

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
        """Cleaning counts summed over the files (loaders.cleaning.rules.COUNTERS)."""
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
        """The command's exit status: ``EXIT_REFUSED`` when the run refused to delete most of
        the collection (``pipeline.deletes``) and changed nothing, else 1 when a file failed
        or was ingested only in part, or none of the files seen went in, else 0."""
        if self.refused:
            return EXIT_REFUSED
        bad = self.failed or self.partial or self.none_ingested
        return EXIT_FILES_FAILED if bad else EXIT_OK

    @property
    def none_ingested(self) -> bool:
        """Files were seen and not one of them went in (all skipped: an unsupported format,
        ...): a run that stored nothing of what it was given is not a success."""
        seen = [f for f in self.files if f.status != "deleted"]
        return bool(seen) and not any(f.status in ("ok", "partial", "unchanged") for f in seen)

    def add_deleted(self, source: str, chunks: int) -> None:
        """Count ``source`` as gone from the roots, its ``chunks`` deleted."""
        self.deleted_sources.append(DeletedSource(source, chunks))
        self.files_deleted += 1
        self.deleted += chunks

    def twins(self) -> dict[str, str]:
        """Paths that look the same as another one of the run (NFC and NFD spellings of one
        name, both present), each with its escaped form (``escaped_marks``)."""
        groups: dict[str, set[str]] = {}
        for result in self.files:
            groups.setdefault(unicodedata.normalize("NFC", result.path), set()).add(result.path)
        return {
            path: escaped_marks(path)
            for paths in groups.values()
            if len(paths) > 1
            for path in paths
        }
    def raise_for_failures(self) -> None:
        """Raise ``FilesFailedError`` naming every file that failed or came in partly (or
        why the run was refused); nothing when all went in."""
        if self.refused:
            raise MassDeleteError(self.refused)
        bad = [f for f in self.files if f.status in ("failed", "partial")]
        if bad:
            raise FilesFailedError(bad)

    def to_dict(self) -> dict[str, object]:
        """The report as JSON-ready data, the derived counts included."""
        data = asdict(self)
        twins = self.twins()
        for result in data["files"]:
            if result["path"] in twins:
                result["shown"] = twins[result["path"]]
        data["failed"] = self.failed
        data["partial"] = self.partial
        data["files_skipped"] = self.files_skipped
        data["changed"] = self.changed
        data["unchanged"] = self.unchanged
        data["cleaning"] = self.cleaning
        data["copies"] = self.copy_groups()
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
        lines += self._access_lines()
        if self.cleaning:
            removed = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in self.cleaning.items())
            lines.append(f"cleaning removed: {removed}")
        lines += [f"NOTE {printable(note)}" for note in self.notes]
        twins = self.twins()
        if twins:
            escaped = ", ".join(sorted(twins.values()))
            lines.append(f"NOTE names that look the same (combining marks escaped): {escaped}")
        if self.refused:
            lines.append(self.refused)
        if self.none_ingested and not self.failed:
            lines.append(
                f"NOTHING INGESTED: none of the {len(self.files)} files seen could be read "
                "(see SKIPPED below); exit status 1"
            )
        if self.rebuilt:
            lines.append(f"rebuilt: Chroma collection {self.collection} now serves it")
        for f in self.files:
            path = twins.get(f.path, f.path)
            if f.status in ("failed", "skipped", "unsupported"):
                label = "FAILED" if f.status == "failed" else "SKIPPED"
                lines.append(f"{label} {path}: {f.error}")
            lines += [f"{'PARTLY ' if f.status == 'partial' else ''}NOTE {path}: {note}"
                      for note in f.notes]  # fmt: skip
        lines += self._corpus_lines(twins)
        shown = self.deleted_sources[:SUMMARY_DELETED_SHOWN]
        lines += [f"DELETED {d.path}: gone from the roots, {d.chunks} chunks" for d in shown]
        if len(self.deleted_sources) > len(shown):
            more = len(self.deleted_sources) - len(shown)
            lines.append(f"DELETED and {more} more sources (--report FILE lists them all)")
        return "\n".join(lines)


    def copy_groups(self) -> list[list[str]]:
        """The groups of copies among this run's files (each sorted, in file order)."""
        groups: dict[tuple[str, ...], list[str]] = {}
        for result in self.files:
            if result.copies:
                group = tuple(sorted({result.path, *result.copies}))
                groups.setdefault(group, list(group))
        return list(groups.values())

    def _corpus_lines(self, twins: dict[str, str]) -> list[str]:
        """The groups of copies and each file's boilerplate removals (the first
        ``SUMMARY_REMOVED_SHOWN``)."""
        groups = self.copy_groups()
        lines = [
            "COPIES " + " = ".join(printable(path) for path in group) + ": each kept and indexed"
            for group in groups[:SUMMARY_REMOVED_SHOWN]
        ]
        # across files: each file named (a page number a loader drops is only counted here)
        removing = [f for f in self.files if any(r["rule"] == "boilerplate" for r in f.removed)]
        for f in removing[:SUMMARY_REMOVED_SHOWN]:
            texts = [printable(str(r["text"])) for r in f.removed if r["rule"] == "boilerplate"]
            lines.append(
                f"REMOVED {twins.get(f.path, f.path)}: {len(texts)} paragraph(s) by rule "
                f"boilerplate, e.g. «{texts[0][:60]}{'…' if len(texts[0]) > 60 else ''}»"
            )
        hidden = max(0, len(groups) - SUMMARY_REMOVED_SHOWN) + max(
            0, len(removing) - SUMMARY_REMOVED_SHOWN
        )
        if hidden:
            lines.append(f"COPIES/REMOVED and {hidden} more (--report FILE lists them all)")
        if removing:
            lines.append("see what is removed and why: ragingest inspect FILE --corpus FOLDER")
        return lines

    def _access_lines(self) -> list[str]:
        if not self.access_policy:
            return []
        lines = [
            f"access policy in force ({self.access_policy}): readers changed for "
            f"{len(self.access_changed)} files (nothing embedded again); "
            f"{len(self.unreadable)} files readable by no one (no rule grants them a reader)"
        ]
        shown = self.unreadable[:SUMMARY_DELETED_SHOWN]
        lines += [f"NO READER {path}: no [[access]] rule grants it a reader" for path in shown]
        if len(self.unreadable) > len(shown):
            lines.append(f"NO READER and {len(self.unreadable) - len(shown)} more")
        return lines


def escaped_marks(path: str) -> str:
    """``path`` with its combining marks written ``\\uXXXX`` (NFC and NFD spellings differ)."""
    return "".join(f"\\u{ord(ch):04x}" if unicodedata.combining(ch) else ch for ch in path)
