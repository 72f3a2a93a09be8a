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


@dataclass
class RunReport:
    files: list[FileResult] = field(default_factory=list)
    added: int = 0
    skipped: int = 0
    deleted: int = 0
    updated: int = 0
    embeddings_computed: int = 0
    seconds: float = 0.0

    @property
    def failed(self) -> int:
        return sum(1 for f in self.files if f.status == "failed")

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0

    def to_dict(self) -> dict:
        data = asdict(self)
        data["failed"] = self.failed
        return data

    def write(self, path: str | Path) -> None:
        Path(path).write_text(
            json.dumps(self.to_dict(), ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
        )

    def summary(self) -> str:
        ok = sum(1 for f in self.files if f.status == "ok")
        chunks = sum(f.chunks for f in self.files)
        lines = [
            f"files: {ok} ingested, {self.failed} failed, {len(self.files)} seen; chunks: {chunks}",
            f"index: {self.added} added, {self.skipped} unchanged, {self.deleted} deleted; "
            f"{self.embeddings_computed} embeddings computed in {self.seconds:.1f} s",
        ]
        lines += [f"FAILED {f.path}: {f.error}" for f in self.files if f.status == "failed"]
        return "\n".join(lines)
