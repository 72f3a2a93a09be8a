#!/usr/bin/env python3
"""Build a tuning set's questions.csv from its annotation file, ``questions.txt``.

``python3 bench/data/make_questions.py bench/data/<set>`` reads ``<set>/questions.txt``:
blocks separated by blank lines, ``@ <corpus_id>`` switching the file, then per question
``K <kind>``, ``Q <question>`` and one ``S <span>`` line per reference (``\\n`` inside a span
stands for a line break of the source). Each span is looked up in ``corpora/<corpus_id>.md``
(read as UTF-8 with newline='', so offsets are code points of the stored text) and must occur
exactly once; the offsets are never typed by hand. Writes ``questions.csv`` (question,
references, corpus_id, kind) and exits 1, writing nothing, if any span is missing, repeated,
or a kind has the wrong number of spans.
"""

import csv
import json
import os
import sys

REFERENCES_PER_KIND = {"single": 1, "rule_exception": 2, "context": 1}


def parse(path: str) -> list[dict]:
    """The annotated questions in file order: corpus_id, kind, question, spans."""
    items: list[dict] = []
    corpus_id = None
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.rstrip("\n")
            tag, text = line[:2], line[2:]
            if tag == "@ ":
                corpus_id = text.strip()
            elif tag == "K ":
                items.append({"corpus_id": corpus_id, "kind": text.strip(), "spans": []})
            elif tag == "Q ":
                items[-1]["question"] = text.strip()
            elif tag == "S ":
                items[-1]["spans"].append(text.replace("\\n", "\n").strip())
    return items


def build(set_dir: str) -> int:
    corpora = {}
    for name in os.listdir(os.path.join(set_dir, "corpora")):
        with open(os.path.join(set_dir, "corpora", name), encoding="utf-8", newline="") as fh:
            corpora[name.removesuffix(".md")] = fh.read()
    rows, errors = [], []
    for item in parse(os.path.join(set_dir, "questions.txt")):
        where = f"{item['corpus_id']}: {item['question'][:60]}"
        text = corpora.get(item["corpus_id"])
        if text is None:
            errors.append(f"{where}: unknown corpus_id")
            continue
        if REFERENCES_PER_KIND.get(item["kind"]) != len(item["spans"]):
            errors.append(f"{where}: {item['kind']} with {len(item['spans'])} spans")
            continue
        refs = []
        for span in item["spans"]:
            start = text.find(span)
            if start < 0 or text.find(span, start + 1) != -1:
                errors.append(f"{where}: span {'missing' if start < 0 else 'repeated'}")
                continue
            refs.append({"content": span, "start_index": start, "end_index": start + len(span)})
        references = json.dumps(refs, ensure_ascii=False)
        rows.append(
            {"question": item["question"], "references": references}
            | {"corpus_id": item["corpus_id"], "kind": item["kind"]}
        )
    if errors:
        print("\n".join(errors), file=sys.stderr)
        return 1
    out = os.path.join(set_dir, "questions.csv")
    with open(out, "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=["question", "references", "corpus_id", "kind"])
        writer.writeheader()
        writer.writerows(rows)
    print(f"{out}: {len(rows)} questions")
    return 0


if __name__ == "__main__":
    sys.exit(build(sys.argv[1]))
