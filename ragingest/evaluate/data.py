"""The inputs of ``ragingest evaluate``: a corpus folder and a question set.

Contract: every corpus file is read as is (UTF-8, line ends kept: ``newline=""``), so reference
offsets index exactly that text; a question carries its references and, when the set has a
``kind`` column (e.g. ``single``, ``rule_exception``), its kind for per-kind scores.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

from ragingest.evaluate.metrics import Reference

CORPUS_SUFFIXES = (".md", ".txt", ".markdown")


@dataclass(frozen=True)
class Question:
    """One evaluation question: its text, the corpus file it is about and the excerpts that
    answer it."""
    text: str
    corpus_id: str
    references: tuple[Reference, ...]
    kind: str = ""


def load_corpus(folder: str | Path) -> dict[str, str]:
    """``{corpus_id: text}``: every ``.md``/``.txt`` file of ``folder``, id = name w/o suffix."""
    folder = Path(folder)
    files = sorted(p for p in folder.iterdir() if p.suffix.lower() in CORPUS_SUFFIXES)
    if not files:
        raise ValueError(f"no .md or .txt files in {folder}")
    corpus = {}
    for path in files:
        with path.open(encoding="utf-8", newline="") as handle:
            corpus[path.stem] = handle.read()
    return corpus


def load_questions(path: str | Path, corpus: dict[str, str] | None = None) -> list[Question]:
    """Questions from a CSV (columns ``question``, ``references``, ``corpus_id``, optional
    ``kind``; references as JSON ``[{content, start_index, end_index}]``) or JSONL with the
    same keys. With ``corpus``, every reference must match its text exactly."""
    path = Path(path)
    if path.suffix.lower() in (".jsonl", ".json"):
        lines = path.read_text(encoding="utf-8").splitlines()
        rows = [json.loads(line) for line in lines if line.strip()]
    else:
        with path.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))
    questions = []
    for number, row in enumerate(rows, 1):
        refs = row["references"]
        refs = json.loads(refs) if isinstance(refs, str) else refs
        corpus_id = str(row["corpus_id"])
        corpus_id = corpus_id[:-3] if corpus_id.endswith(".md") else corpus_id
        references = tuple(
            Reference(corpus_id, int(r["start_index"]), int(r["end_index"])) for r in refs
        )
        if not references:
            raise ValueError(f"{path}: question {number} has no references")
        if corpus is not None:
            if corpus_id not in corpus:
                raise ValueError(f"{path}: question {number}: no corpus file {corpus_id!r}")
            for ref, raw in zip(references, refs, strict=True):
                content = raw.get("content")
                if content is not None and corpus[corpus_id][ref.start : ref.end] != content:
                    raise ValueError(
                        f"{path}: question {number}: reference [{ref.start}, {ref.end}) does "
                        f"not match the text of {corpus_id}"
                    )
        kind = str(row.get("kind") or "")
        questions.append(Question(str(row["question"]), corpus_id, references, kind))
    return questions
