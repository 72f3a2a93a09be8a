"""Chroma's HNSW candidates per query (``hnsw:search_ef``): misses against exact search, and time.

``python -m bench.search_ef misses --persist-dir D [--collection bench-context] --set NAME
[--ef 100,200] [--builds 6]``: the vectors of a collection that ``ragingest ingest`` wrote
(``bench.context`` leaves one per set in its ``--work``: ``product_<set>``) are copied into a
fresh collection per build, in one upsert, at each ``search_ef``; the set's questions (embedded
by the default model, as queries) are asked right after the write and again after a reopen. A
query misses when the cosines of Chroma's top 5 sum to less than those of the exact top 5
(numpy over the same vectors) by more than 1e-4; ties in another order are no miss.

``python -m bench.search_ef time [--vectors 100000] [--ef 100,200]``: random unit vectors
(384 dimensions, like e5-small), 300 queries near them, ``k`` = 20, milliseconds per query
(best of 3 rounds), each ``search_ef`` in its own collection built the same way; the ratio to
the first ``search_ef`` is the result (shared machines: compare within one run).
"""

from __future__ import annotations

import argparse
import multiprocessing
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.context import _questions_file, set_folder

TOP = 5


def _client(path: Path) -> Any:
    import chromadb

    return chromadb.PersistentClient(path=str(path))


def _open_and_ask(
    folder: str, write: dict[str, Any] | None, exact: np.ndarray, sims: np.ndarray, q: np.ndarray
) -> int:
    """In a process of its own (Chroma keeps one system per path and process, so a reopen in
    the same process reuses the graph): write ``write`` if given, then ask every query."""
    client = _client(Path(folder))
    if write is not None:
        metadata = {"hnsw:space": "cosine", "hnsw:search_ef": write["ef"]}
        client.create_collection("copy", metadata=metadata).upsert(
            ids=write["ids"], embeddings=write["vectors"]
        )
    collection = client.get_collection("copy")
    ids = collection.get(include=[])["ids"]
    where = {chunk_id: n for n, chunk_id in enumerate(sorted(ids))}
    found = collection.query(query_embeddings=q.tolist(), n_results=TOP)
    short = 0
    for n, hit_ids in enumerate(found["ids"]):
        got = sims[n, [where[i] for i in hit_ids]].sum()
        short += int(sims[n, exact[n]].sum() - got > 1e-4)
    return short


def misses(persist: Path, collection: str, set_name: str, efs: list[int], builds: int) -> None:
    from ragingest.evaluate.cache import EmbeddingCache
    from ragingest.evaluate.data import load_corpus, load_questions

    folder = set_folder(set_name)
    questions = load_questions(_questions_file(folder), load_corpus(folder / "corpora"))
    queries = np.asarray(EmbeddingCache(None).queries([q.text for q in questions]), "float32")
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    stored = _client(persist).get_collection(collection).get(include=["embeddings"])
    order = np.argsort(stored["ids"])  # the children index the vectors by sorted id
    ids = [stored["ids"][i] for i in order]
    vectors = np.asarray(stored["embeddings"], "float32")[order]
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    sims = queries @ unit.T
    exact = np.argsort(-sims, axis=1)[:, :TOP]
    print(f"{set_name}: {len(ids)} chunks, {len(questions)} questions, {builds} builds")
    spawn = multiprocessing.get_context("spawn")
    for ef in efs:
        counts = []
        for _ in range(builds):
            folder_ = tempfile.mkdtemp(prefix="search-ef-")
            write = {"ef": ef, "ids": ids, "vectors": vectors}
            try:
                for step in (write, None):  # the write and its first queries, then a reopen
                    with spawn.Pool(1) as pool:
                        args = (folder_, step, exact, sims, queries)
                        counts.append(pool.apply(_open_and_ask, args))
            finally:
                shutil.rmtree(folder_, ignore_errors=True)
        print(f"search_ef {ef}: {sum(counts)} misses over {len(counts)} opens {counts}")


def timing(count: int, efs: list[int]) -> None:
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(count, 384)).astype("float32")
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    picks = vectors[rng.choice(count, 300, replace=False)]
    queries = picks + rng.normal(size=picks.shape).astype("float32") / 40
    first = None
    for ef in efs:
        folder = Path(tempfile.mkdtemp(prefix="search-ef-"))
        try:
            metadata = {"hnsw:space": "cosine", "hnsw:search_ef": ef}
            collection = _client(folder).create_collection("copy", metadata=metadata)
            for i in range(0, count, 5000):
                part = range(i, min(i + 5000, count))
                collection.add(ids=[str(j) for j in part], embeddings=vectors[i : i + 5000])
            rounds = []
            for _ in range(3):
                started = time.perf_counter()
                for query in queries:
                    collection.query(query_embeddings=[query], n_results=20)
                rounds.append((time.perf_counter() - started) / len(queries) * 1000)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        first = first or min(rounds)
        print(
            f"{count} vectors, search_ef {ef}: {min(rounds):.2f} ms a query"
            f" (x{min(rounds) / first:.2f})"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    miss = sub.add_parser("misses", help="queries missing their exact top 5")
    miss.add_argument("--persist-dir", type=Path, required=True)
    miss.add_argument("--collection", default="bench-context")
    miss.add_argument("--set", required=True, help="the questions: a set name or folder")
    miss.add_argument("--builds", type=int, default=6)
    clock = sub.add_parser("time", help="milliseconds a query")
    clock.add_argument("--vectors", type=int, default=100_000)
    for mode in (miss, clock):
        mode.add_argument("--ef", default="100,200", help="search_ef values, comma-separated")
    args = parser.parse_args(argv)
    efs = [int(x) for x in args.ef.split(",")]
    if args.mode == "misses":
        misses(args.persist_dir, args.collection, args.set, efs, args.builds)
    else:
        timing(args.vectors, efs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
