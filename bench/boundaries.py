"""Chunk-boundary snapshot: prove a splitter optimization changes no chunk.

``python -m bench.boundaries save FILE`` records every chunk (offsets, token count, strategy,
oversized flag, embedded text hash) of the heading-first splitter over the eval corpora, the
examples, the golden memo and seeded synthetic Markdown (headings, tables, code, lists,
Russian abbreviations) under several settings; ``check FILE`` recomputes and diffs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
CORPORA = SHARED / "eval" / "chroma_general" / "corpora"

WORDS = (
    "правило исключение срок выдачи альбом книга читатель заявка продление фонд "
    "rule exception loan period album reader request 14 3 т. е. г. ст. 2024 e.g. А. С. "
    "Пушкин Dr. approx. — «цитата» (скобки) № 5"
).split()

# (unit, chunk_size, chunk_overlap, min_chunk_size, max_embed_tokens or None = model's)
CONFIGS = [
    ("tokens", None, None, 100, None),
    ("tokens", 128, 20, 30, None),
    ("tokens", 40, 6, 10, 72),
    ("tokens", 24, 0, 0, 72),
    ("chars", 800, 100, 50, None),
    ("words", 120, 15, 20, None),
]


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 25))).capitalize() + "."


def _block(rng: random.Random) -> str:
    kind = rng.choice(["para", "para", "para", "heading", "heading", "table", "code", "list"])
    if kind == "para":
        return " ".join(_sentence(rng) for _ in range(rng.randint(1, 14)))
    if kind == "heading":
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4)))
        return "#" * rng.randint(1, 4) + " " + words.capitalize()
    if kind == "table":
        rows = [f"| {rng.choice(WORDS)} | {rng.choice(WORDS)} |" for _ in range(rng.randint(1, 40))]
        return "\n".join(["| a | b |", "|---|---|", *rows])
    if kind == "code":
        return "```\n" + " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 300))) + "\n```"
    return "\n".join(f"- {_sentence(rng)}" for _ in range(rng.randint(1, 8)))


def synthetic(count: int = 120, seed: int = 6) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    docs = []
    for i in range(count):
        blocks = [_block(rng) for _ in range(rng.randint(1, 60))]
        seps = [rng.choice(["\n", "\n\n", "\n\n\n"]) for _ in blocks]
        docs.append((f"synthetic-{i}", "".join(b + s for b, s in zip(blocks, seps, strict=True))))
    return docs


def documents() -> list[tuple[str, str]]:
    paths = sorted(CORPORA.glob("*.md")) + sorted((ROOT / "examples").glob("*.md"))
    paths += [SHARED / "golden" / "library_memo.md"]
    docs = [(p.stem, p.read_text(encoding="utf-8")) for p in paths if p.exists()]
    return docs + synthetic()


def snapshot() -> dict[str, list]:
    from ragingest.models.resolve import load_model_info
    from ragingest.splitters import HeadingFirstSplitter

    info = load_model_info(None)
    out: dict[str, list] = {}
    docs = documents()
    for unit, size, overlap, minimum, limit in CONFIGS:
        splitter = HeadingFirstSplitter(
            size,
            overlap,
            minimum,
            unit=unit,  # type: ignore[arg-type]
            tokenizer=info.tokenizer,
            max_embed_tokens=limit or info.max_embed_tokens,
        )
        for name, text in docs:
            key = f"{unit}/{size}/{overlap}/{minimum}/{limit}|{name}"
            try:
                chunks = splitter.split_chunks(text, title=name)
            except RecursionError as exc:  # a known splitter failure is behaviour too
                out[key] = [f"error: {type(exc).__name__}"]
                continue
            out[key] = [
                [
                    c.start_index,
                    c.end_index,
                    c.token_count,
                    c.strategy,
                    c.oversized,
                    hashlib.sha1(c.embed_text.encode()).hexdigest()[:12],
                ]
                for c in chunks
            ]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.boundaries")
    parser.add_argument("action", choices=("save", "check"))
    parser.add_argument("file", type=Path)
    args = parser.parse_args(argv)
    current = snapshot()
    if args.action == "save":
        args.file.write_text(json.dumps(current), encoding="utf-8")
        print(f"saved {sum(map(len, current.values()))} chunks of {len(current)} splits")
        return 0
    saved = json.loads(args.file.read_text(encoding="utf-8"))
    bad = [k for k in saved.keys() | current.keys() if saved.get(k) != current.get(k)]
    total = sum(map(len, current.values()))
    if bad:
        print(f"{len(bad)} of {len(current)} splits differ, e.g. {sorted(bad)[:5]}")
        return 1
    print(f"identical: {total} chunks of {len(current)} splits")
    return 0


if __name__ == "__main__":
    sys.exit(main())
