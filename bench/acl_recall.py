"""Does a cheaper way of applying the access filter find the same nearest chunks? Dense
recall@20 against exact search over the chunks a caller may read, on real embeddings (the
``bench.serve`` stand-in vectors are random: HNSW's recall on them says nothing).

``--chunks`` chunks of three corpus sentences (as ``bench.serve`` draws them), embedded by the
real model, with ``bench.serve_access`` readers; for each of ``--queries`` questions, as the
caller its text hashes to: the exact top 20 by cosine among the chunks the caller may read,
against Chroma's filtered query and the two ``bench.acl_postfilter`` modes.

    .venv/bin/python -m bench.acl_recall [--chunks 10000] [--queries 60] [--work DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import zlib
from pathlib import Path

import numpy as np


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--work", type=Path)
    parser.add_argument("--pool", type=int, help="acl_postfilter.POOL (default 200)")
    args = parser.parse_args(argv)

    from langchain_core.documents import Document

    from bench import acl_postfilter, serve_access
    from bench.acl_postfilter import FilteredReads
    from bench.serve import chunk_text, questions, sentences
    from bench.serve_access import readers
    from ragingest.models.embeddings import SentenceTransformerEmbeddings
    from ragingest.vectorstore.access import guarded
    from ragingest.vectorstore.access.principals import Principals, access_filter
    from ragingest.vectorstore.chroma.store import open_store

    if args.pool:
        acl_postfilter.POOL = args.pool
    with contextlib.ExitStack() as stack:
        work = args.work or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="rec-")))
        model = SentenceTransformerEmbeddings()
        store = open_store(work, "recall", model)
        rng = np.random.default_rng(21)
        pool = sentences()
        texts = [chunk_text(pool, rng) for _ in range(args.chunks)]
        if store.count() != args.chunks:
            for first in range(0, args.chunks, 500):
                part = range(first, min(first + 500, args.chunks))
                docs = [
                    Document(
                        texts[n],
                        id=f"c{n:07d}",
                        metadata={"source": f"f{n // 8}.md", "access": readers(n // 8)},
                    )
                    for n in part
                ]
                vectors = model.embed_documents([texts[n] for n in part])
                store.add_documents(docs, ids=[d.id for d in docs], vectors=vectors)
                print(f"  embedded {part[-1] + 1}", file=sys.stderr, flush=True)
        matrix = np.asarray(
            [v for first in range(0, args.chunks, 5000) for v in _vectors(store, first)],
            dtype=np.float32,
        )
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        allowed = [set(readers(n // 8)) for n in range(args.chunks)]
        callers = serve_access.callers(False)
        ways = {"chroma": store, "post": FilteredReads(store, "post"),
                "cached": FilteredReads(store, "cached")}  # fmt: skip
        factors = (1, 2, 3, 4)  # guarded.POOL_FACTOR tried (pool ~ f * 20 / share)
        names = ["unfiltered", *ways, *(f"guarded x{f}" for f in factors)]
        recall: dict[str, list[float]] = {name: [] for name in names}
        top4: dict[str, list[float]] = {name: [] for name in names}  # recall@4: the passages
        for question in questions()[: args.queries]:
            caller = callers[zlib.crc32(question.encode()) % len(callers)]
            names = {*caller, "*"}
            vector = np.asarray(store.embed_query(question), dtype=np.float32)
            scores = matrix @ (vector / np.linalg.norm(vector))
            everyone = [f"c{n:07d}" for n in np.argsort(-scores)[:20]]
            ranked = [i for i, _ in store.nearest(vector.tolist(), 20)]
            recall["unfiltered"].append(len(set(ranked) & set(everyone)) / 20)  # HNSW's own
            top4["unfiltered"].append(len(set(ranked[:4]) & set(everyone[:4])) / 4)
            scores[[not (r & names) for r in allowed]] = -9.0
            exact_order = [f"c{n:07d}" for n in np.argsort(-scores)[:20]]
            exact = set(exact_order)
            where = access_filter(Principals(caller), policy=True)
            for name, way in ways.items():
                ranked = [i for i, _ in way.nearest(vector.tolist(), 20, where)]
                recall[name].append(len(set(ranked) & exact) / 20)
                top4[name].append(len(set(ranked[:4]) & set(exact_order[:4])) / 4)
            for factor in factors:
                guarded.POOL_FACTOR = factor
                reads = guarded.GuardedSource(UnderPolicy(store), Principals(caller))
                ranked = [i for i, _ in reads.nearest(vector.tolist(), 20)]
                recall[f"guarded x{factor}"].append(len(set(ranked) & exact) / 20)
                top4[f"guarded x{factor}"].append(len(set(ranked[:4]) & set(exact_order[:4])) / 4)
        for name, values in recall.items():
            print(
                f"{name:10s} recall@20 {np.mean(values):.3f} (min {min(values):.2f}), "
                f"recall@4 {np.mean(top4[name]):.3f} (min {min(top4[name]):.2f})"
            )
    return 0


class UnderPolicy:
    """``store`` read as a collection with an access policy (this one was written without the
    marker; its chunks carry ``access`` all the same)."""

    def __init__(self, store: object) -> None:
        self.store = store

    def __getattr__(self, name: str) -> object:
        return getattr(self.store, name)

    def access_policy(self) -> bool:
        return True


def _vectors(store: object, first: int) -> list[list[float]]:
    """Stored vectors of chunks ``first`` .. ``first + 4999``, in id order."""
    ids = [f"c{n:07d}" for n in range(first, first + 5000)]
    got = store.vectors(ids)  # type: ignore[attr-defined]
    return [got[i] for i in ids if i in got]


if __name__ == "__main__":
    sys.exit(main())
