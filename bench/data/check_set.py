#!/usr/bin/env python3
"""Re-verify a tuning set of bench/data: every reference span (exact, unique in its file, the
right count per kind, no overlap) and every sources.json hash; print counts per kind and per file.

Exit status 0 when everything holds, 1 (with the problems listed) otherwise. Standard library
only (Python 3.10 or newer): ``python3 bench/data/check_set.py bench/data/SET`` (each set's
``check.py`` calls it on its own folder).
"""

import collections
import csv
import hashlib
import itertools
import json
import os
import sys

REFERENCES_PER_KIND = {"single": 1, "rule_exception": 2, "context": 1}


def load_corpora(here: str, errors: list[str]) -> dict[str, str]:
    """The corpus files named in sources.json, read as UTF-8 with newline='' (offsets count
    code points of exactly the stored text); size and sha256 mismatches go to ``errors``."""
    with open(os.path.join(here, "sources.json"), encoding="utf-8") as fh:
        sources = json.load(fh)
    corpora = {}
    for entry in sources["files"]:
        path = os.path.join(here, "corpora", entry["corpus_id"] + ".md")
        with open(path, "rb") as fh:
            data = fh.read()
        with open(path, encoding="utf-8", newline="") as fh:
            text = fh.read()
        corpora[entry["corpus_id"]] = text
        if len(text) != entry["chars"]:
            errors.append(f"{entry['corpus_id']}: chars {len(text)} != {entry['chars']}")
        if hashlib.sha256(data).hexdigest() != entry["sha256"]:
            errors.append(f"{entry['corpus_id']}: sha256 mismatch")
    on_disk = {n[:-3] for n in os.listdir(os.path.join(here, "corpora")) if n.endswith(".md")}
    if on_disk != set(corpora):
        errors.append(f"corpora/ and sources.json disagree: {sorted(on_disk ^ set(corpora))}")
    return corpora


def check_row(line: int, row: dict[str, str], corpora: dict[str, str]) -> list[str]:
    """Problems with one questions.csv row (empty when it is sound)."""
    cid, kind = row["corpus_id"], row["kind"]
    if cid not in corpora:
        return [f"line {line}: unknown corpus_id {cid}"]
    if kind not in REFERENCES_PER_KIND:
        return [f"line {line}: bad kind {kind}"]
    refs = json.loads(row["references"])
    problems = []
    if len(refs) != REFERENCES_PER_KIND[kind]:
        problems.append(f"line {line}: {kind} has {len(refs)} references")
    text = corpora[cid]
    for ref in refs:
        start, end, content = ref["start_index"], ref["end_index"], ref["content"]
        if text[start:end] != content:
            problems.append(f"line {line}: corpus[{start}:{end}] != content")
        if text.find(content) != start or text.find(content, start + 1) != -1:
            problems.append(f"line {line}: span not unique / find() != start_index")
    spans = sorted((r["start_index"], r["end_index"]) for r in refs)
    if any(a_end > b_start for (_, a_end), (b_start, _) in itertools.pairwise(spans)):
        problems.append(f"line {line}: overlapping references")
    return problems


def main(folder: str) -> int:
    here = os.path.abspath(folder)
    errors: list[str] = []
    corpora = load_corpora(here, errors)
    with open(os.path.join(here, "questions.csv"), encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    per_kind: collections.Counter[str] = collections.Counter()
    per_file: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    seen = set()
    for line, row in enumerate(rows, 2):
        if row["question"] in seen:
            errors.append(f"line {line}: duplicate question")
        seen.add(row["question"])
        problems = check_row(line, row, corpora)
        errors.extend(problems)
        if not problems:
            per_kind[row["kind"]] += 1
            per_file[row["corpus_id"]][row["kind"]] += 1
    chars = sum(map(len, corpora.values()))
    print(f"files: {len(corpora)}  questions: {len(rows)}  chars: {chars}")
    print("per kind:", dict(per_kind))
    print(f"{'corpus_id':70} single rule_exc context total")
    for cid in sorted(corpora):
        c = per_file[cid]
        print(
            f"{cid:70} {c['single']:6} {c['rule_exception']:8} {c['context']:7} {sum(c.values()):5}"
        )
    if errors:
        print(f"FAIL: {len(errors)} problem(s)")
        for error in errors:
            print("  " + error)
        return 1
    print("OK: all references verified")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
