"""The run report: what happened to every file, and the totals."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path


@dataclass
class FileResult:
    path: str
    status: str  # "ok" | "failed" | "unchanged" | "unsupported"
    chunks: int = 0
    error: str = ""
    kind: str = ""  # the error kind (ragingest.errors), empty when ok
    cleaning: dict[str, int] = field(default_factory=dict)  # what cleaning removed (non-zero)

    def __post_init__(self) -> None:
        self.cleaning = {k: v for k, v in (self.cleaning or {}).items() if v}


@dataclass
class RunReport:
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
        return sum(1 for f in self.files if f.status in ("ok", "failed"))

    @property
    def unchanged(self) -> int:
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
        return sum(1 for f in self.files if f.status == "failed")

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0

    def to_dict(self) -> dict:
        data = asdict(self)
        data["failed"] = self.failed
        data["changed"] = self.changed
        data["unchanged"] = self.unchanged
        data["cleaning"] = self.cleaning
        return data

    def write(self, path: str | Path) -> None:
        Path(path).write_text(
            json.dumps(self.to_dict(), ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
        )

    def summary(self) -> str:
        ok = sum(1 for f in self.files if f.status in ("ok", "unchanged"))
        chunks = sum(f.chunks for f in self.files)
        gone = f" ({self.files_deleted} files gone)" if self.files_deleted else ""
        lines = [
            f"files: {ok} ingested ({self.unchanged} unchanged, not parsed), {self.failed} "
            f"failed, {len(self.files)} seen; chunks: {chunks}",
            f"index: {self.added} added, {self.skipped} unchanged, {self.deleted} deleted{gone}; "
            f"{self.embeddings_computed} embeddings computed ({self.embeddings_cached} cached) "
            f"in {self.seconds:.1f} s",
        ]
        if self.cleaning:
            removed = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in self.cleaning.items())
            lines.append(f"cleaning removed: {removed}")
        if self.rebuilt:
            lines.append(f"rebuilt: Chroma collection {self.collection} now serves it")
        lines += [f"FAILED {f.path}: {f.error}" for f in self.files if f.status == "failed"]
        return "\n".join(lines)
