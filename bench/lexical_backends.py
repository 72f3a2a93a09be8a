"""The lexical index's two backends ranked on the tuning sets: SQLite FTS5 (beside Chroma) and
PostgreSQL full-text rows (with a PostgreSQL records database), both over ``lexical.terms``.

Each shared set is cut by the default splitter (``ragingest evaluate``'s chunking, no
embedding), every chunk's embedded text (breadcrumb + text, as the index holds it) goes into
both indexes, and each question takes the top ``k`` by BM25 alone from each; R@k and MRR as
``ragingest.evaluate.metrics`` scores them, and how many questions got the very same ranking.
PostgreSQL: a throwaway server (``tests/postgres.py``: initdb in a temp folder, 127.0.0.1).

    .venv/bin/python -m bench.lexical_backends [--sets clickhouse_ru chroma_general] [-k 5]
        [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from bench.common import SHARED
from ragingest.evaluate import metrics as m

SETS = {
    "clickhouse_ru": ("corpora", "questions.csv"),
    "chroma_general": ("corpora", "questions_df.csv"),
}


def measure(name: str, url: str, k: int) -> dict[str, Any]:
    from ragingest.evaluate.chunking import build_splitter, split_corpus
    from ragingest.evaluate.configs import DEFAULT
    from ragingest.evaluate.data import load_corpus, load_questions
    from ragingest.vectorstore.lexical.index import LexicalIndex
    from ragingest.vectorstore.lexical.pg import PgLexicalIndex
    from ragingest.vectorstore.records.database import records_engine

    folder, questions_file = SETS[name]
    root = SHARED / "eval" / name
    corpus = load_corpus(root / folder)
    questions = load_questions(root / questions_file, corpus)
    chunks = split_corpus(build_splitter(DEFAULT, None), corpus)
    ids = [str(n) for n in range(len(chunks))]
    texts = [c.embed_text for c in chunks]
    with tempfile.TemporaryDirectory(prefix="bench-lexical-") as scratch:
        backends = {
            "sqlite_fts5": LexicalIndex(scratch, name),
            "postgresql": PgLexicalIndex(records_engine(None, url), name),
        }
        out: dict[str, Any] = {"questions": len(questions), "chunks": len(chunks)}
        rankings: dict[str, list[list[str]]] = {}
        for backend, index in backends.items():
            index.add(ids, texts)
            started = time.perf_counter()
            rankings[backend] = [[i for i, _ in index.search(q.text, k)] for q in questions]
            seconds = time.perf_counter() - started
            recall, rr = [], []
            for q, found in zip(questions, rankings[backend], strict=True):
                hits = [_hit(chunks[int(i)]) for i in found]
                recall.append(m.recall_at_k(q.references, hits))
                rr.append(m.mrr(q.references, hits))
            out[backend] = {
                f"r@{k}": round(100 * sum(recall) / len(recall), 1),
                "mrr": round(sum(rr) / len(rr), 3),
                "ms_per_query": round(1000 * seconds / len(questions), 1),
            }
        same = sum(a == b for a, b in zip(*rankings.values(), strict=True))
        out["same_ranking"] = f"{same}/{len(questions)}"
    return out


def _hit(chunk: Any) -> m.Hit:
    return m.Hit(chunk.corpus_id, chunk.start, chunk.end, chunk.text, chunk.tokens)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=list(SETS))
    parser.add_argument("-k", type=int, default=5)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    from tests.postgres import postgres_server

    with postgres_server() as pg:
        url = pg.create_database(f"bench_{uuid.uuid4().hex[:8]}")
        results = {name: measure(name, url, args.k) for name in args.sets}
    print(json.dumps(results, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
