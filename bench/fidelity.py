"""Fidelity: the share of source sentences a run stores, over the tuning sets plus copies.

``python -m bench.fidelity [--copies 2] [--out FILE]``

The corpus: every Markdown file of the tuning sets (``../shared/eval/*/corpora``: chroma_general
and clickhouse_ru) under ``orig/``, ``--copies`` exact copies of them (``copy1/``, ...), a
near-copy of each (``v2/``: its first sentence of 40+ characters changed) and, under
``pages/``, three copies of ``examples/regulation_service.pdf`` (a paged format: running
headers, page numbers, a table of contents). It is cleaned and split as ``ingest`` does (the
corpus scan, then each file's split stage with the default settings and the model's
tokenizer; nothing embedded). A source sentence (a line or a ``.!?``-ended run of 3+ words of
the file: the Markdown as written, its YAML front matter left out as metadata; the PDF's
normalized text loaded with every cleaning rule off) counts as
*stored* when a chunk's span holds it (whitespace folded), *listed* when the file's removal
list holds it with its rule, and *lost* otherwise. Goal: nothing lost; the boilerplate rule
lists no sentence (cross-document removals in the tuning sets would be body text).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.common import ROOT, SHARED

SETS = sorted((SHARED / "eval").glob("*/corpora"))
EXAMPLE = ROOT / "examples" / "regulation_service.pdf"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.DOTALL)


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` (module docstring), whitespace folded."""
    out = []
    for piece in _SENTENCE_END.split(text):
        piece = " ".join(piece.split())
        if len(piece.split()) >= 3:
            out.append(piece)
    return out


def build(folder: Path, copies: int) -> None:
    """The benchmark's corpus under ``folder`` (module docstring)."""
    for corpora in SETS:
        for path in sorted(corpora.glob("*.md")):
            text = path.read_text(encoding="utf-8")
            name = f"{corpora.parent.name}__{path.name}"
            for sub in ["orig", *(f"copy{k}" for k in range(1, copies + 1))]:
                (folder / sub).mkdir(parents=True, exist_ok=True)
                (folder / sub / name).write_text(text, encoding="utf-8")
            first = next((s for s in sentences(text) if len(s) >= 40 and s in text), None)
            if first is not None:
                (folder / "v2").mkdir(exist_ok=True)
                changed = text.replace(first, "В новой редакции этот пункт изменён.", 1)
                (folder / "v2" / name).write_text(changed, encoding="utf-8")
    for k in range(3):
        (folder / "pages" / f"c{k}").mkdir(parents=True)
        shutil.copy(EXAMPLE, folder / "pages" / f"c{k}" / EXAMPLE.name)


def measure(folder: Path) -> dict[str, Any]:
    from ragingest.cli.inspect import file_splitting
    from ragingest.loaders.cleaning.rules import CleaningRules, Removal
    from ragingest.loaders.markdown.source_offsets import indexed_text
    from ragingest.pipeline.plan import make_plan, scan_corpus
    from ragingest.pipeline.split import split_documents
    from ragingest.splitters.factory import SplitSettings

    rules = CleaningRules()
    splitting = file_splitting(SplitSettings(), cleaning=rules, max_chunks=None)
    tasks = make_plan([folder], {}).tasks
    clock = time.perf_counter()
    corpus = scan_corpus(tasks, rules)
    assert corpus is not None
    counts: Counter[str] = Counter()
    listed_by: Counter[str] = Counter()
    lost: list[str] = []
    groups = {tuple(sorted(corpus.groups[t.name])) for t in tasks}
    for task in tasks:
        assert task.path is not None
        if task.path.suffix == ".md":  # front matter is metadata, not text
            source = _FRONT_MATTER.sub("", task.path.read_text(encoding="utf-8"), count=1)
        else:
            raw = task.load(splitting.max_file_bytes, CleaningRules.parse(["all"]))
            source = "\n\n".join(d.page_content for d in raw)
        removed: list[Removal] = []
        documents, _counts = split_documents(task, splitting, corpus, removed)
        stored = []
        for document, records in documents:
            indexed = indexed_text(document.page_content, document.metadata)
            mask = bytearray(len(indexed))
            for record in records:
                start, end = record.metadata["start_index"], record.metadata["end_index"]
                mask[start:end] = b"\x01" * (end - start)
            # whitespace between two chunks holds nothing: only uncovered text breaks a sentence
            kept = "".join(
                c if mask[i] or c.isspace() else "\0" for i, c in enumerate(indexed)
            )
            stored.append(" ".join(kept.split()))
        removals = [(r.rule, " ".join(r.text.split())) for r in removed]
        # a sentence across two removed blocks ("Стр. 1" then the next page's header)
        joined = " ".join(text for _rule, text in removals)
        for sentence in sentences(source):
            counts["sentences"] += 1
            if any(sentence in text for text in stored):
                counts["stored"] += 1
                continue
            rules_listing = {rule for rule, text in removals if sentence in text}
            if not rules_listing and sentence in joined:
                rules_listing = {"several"}
            if rules_listing:
                counts["listed"] += 1
                listed_by.update(rules_listing)
            else:
                counts["lost"] += 1
                lost.append(f"{task.source}: {sentence[:80]}")
    seconds = time.perf_counter() - clock
    total = counts["sentences"]
    return {
        "files": len(tasks),
        "groups_of_copies": sum(1 for g in groups if len(g) > 1),
        "sentences": total,
        "stored_share": counts["stored"] / total,
        "listed_share": counts["listed"] / total,
        "lost": counts["lost"],
        "listed_by_rule": dict(listed_by),
        "lost_examples": lost[:20],
        "seconds": seconds,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=2)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        build(Path(tmp), args.copies)
        result = measure(Path(tmp))
    text = json.dumps(result, ensure_ascii=False, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    met = result["lost"] == 0 and not result["listed_by_rule"].get("boilerplate")
    print(
        f"stored {result['stored_share']:.2%}, listed {result['listed_share']:.2%}, lost "
        f"{result['lost']} of {result['sentences']} sentences; goal met: {met}"
    )
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
