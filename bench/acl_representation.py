"""Which metadata form of a chunk's readers Chroma filters fastest: the cost of a permission
filter on the dense query alone, before the retriever is built on it (bench/serve.py
``--filtered`` measures the whole read path).

One embedded Chroma collection of ``--chunks`` chunks (8 to a document) with seeded random unit
vectors, each chunk carrying its document's readers in three forms at once, so every form is
timed on the same HNSW index:

- ``access``: the sorted list of principal strings (the stored contract, ``schema.ACCESS_KEY``),
  read with ``$or`` of ``{"access": {"$contains": p}}`` over the caller's principals and ``*``;
- ``acl_<principal>``: one boolean key per reader (only the True ones stored), read with
  ``$or`` of ``{"acl_<p>": {"$eq": True}}``;
- ``acl_set``: one scalar naming the document's whole reader set, read with ``$in`` over every
  set that names one of the caller's principals (the reader needs the catalogue of sets).

Documents: ``--groups`` groups; each readable by 1-3 groups drawn uniformly, about 10 % public.
Callers: one user (no document names users, so that term matches nothing) and 2-4 groups.
Each query: a seeded random unit vector, ``n_results`` = ``--k`` (the retriever's fetch_k is 20).
The forms run round-robin per query, so load drift on a shared machine hits all alike.

    .venv/bin/python -m bench.acl_representation [--chunks 100000] [--queries 300] [--work DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

DIM = 384
PER_DOC = 8


def readers(rng: Any, groups: int) -> list[str]:
    """A document's sorted principal list: ``["*"]`` for about 10 %, else 1-3 groups."""
    if rng.random() < 0.10:
        return ["*"]
    drawn = rng.choice(groups, size=int(rng.integers(1, 4)), replace=False)
    return sorted(f"group:g{g:02d}" for g in drawn)


def key(principal: str) -> str:
    return "acl_" + principal.replace(":", "_").replace("*", "public")


def documents(chunks: int, groups: int) -> list[list[str]]:
    """Every document's readers (seeded: the build and the query side draw the same)."""
    rng = np.random.default_rng(37)
    return [readers(rng, groups) for _ in range((chunks + PER_DOC - 1) // PER_DOC)]


def build(collection: Any, docs: list[list[str]], chunks: int, batch: int) -> None:
    rng = np.random.default_rng(36)
    for first in range(0, chunks, batch):
        numbers = range(first, min(first + batch, chunks))
        vectors = rng.standard_normal((len(numbers), DIM)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        metas = []
        for n in numbers:
            access = docs[n // PER_DOC]
            meta: dict[str, Any] = {"access": access, "acl_set": "|".join(access)}
            meta |= {key(p): True for p in access}
            metas.append(meta)
        collection.add(
            ids=[f"c{n:07d}" for n in numbers],
            embeddings=vectors,
            metadatas=metas,
            documents=[f"chunk {n}" for n in numbers],
        )
        print(f"  built {numbers[-1] + 1}", file=sys.stderr, flush=True)


POST = "post-filter (unfiltered x10, else $contains)"


def post_filter(collection: Any, vector: list[float], k: int, names: set[str]) -> list[str]:
    """The alternative to Chroma's pre-filter: the ``10 k`` nearest unfiltered, kept when
    their ``access`` names one of ``names``; too few kept: the pre-filtered query."""
    found = collection.query(query_embeddings=[vector], n_results=10 * k, include=["metadatas"])
    kept = [
        i
        for i, m in zip(found["ids"][0], found["metadatas"][0], strict=True)
        if names & set(m["access"])
    ]
    if len(kept) >= k:
        return kept[:k]
    where = {"$or": [{"access": {"$contains": p}} for p in sorted(names)]}
    return collection.query(query_embeddings=[vector], n_results=k, where=where)["ids"][0]


def filters(caller: list[str], sets: list[str]) -> dict[str, dict | None]:
    names = sorted({*caller, "*"})
    admitted = [s for s in sets if set(s.split("|")) & set(names)]
    return {
        "unfiltered": None,
        "$contains list": {"$or": [{"access": {"$contains": p}} for p in names]},
        "bool keys $or $eq": {"$or": [{key(p): {"$eq": True}} for p in names]},
        "acl_set $in": {"acl_set": {"$in": admitted}},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--groups", type=int, default=50)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--k", type=int, default=20)
    parser.add_argument("--work", type=Path, help="keep the collection here for the next run")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)

    import chromadb

    with contextlib.ExitStack() as stack:
        work = args.work or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="acl-")))
        client = chromadb.PersistentClient(path=str(work))
        docs = documents(args.chunks, args.groups)
        collection = client.get_or_create_collection("acl", metadata={"hnsw:space": "cosine"})
        if collection.count() != args.chunks:
            client.delete_collection("acl")
            collection = client.create_collection("acl", metadata={"hnsw:space": "cosine"})
            started = time.perf_counter()
            build(collection, docs, args.chunks, min(5000, client.get_max_batch_size()))
            print(f"built in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        sets = sorted({"|".join(d) for d in docs})  # the catalogue the $in form needs
        rng = np.random.default_rng(39)
        latencies: dict[str, list[float]] = {}
        allowed: list[float] = []
        for q in range(args.queries):
            caller = [f"user:u{q:03d}"] + [
                f"group:g{g:02d}"
                for g in rng.choice(args.groups, size=int(rng.integers(2, 5)), replace=False)
            ]
            vector = rng.standard_normal(DIM).astype(np.float32)
            vector /= np.linalg.norm(vector)
            for name, where in filters(caller, sets).items():
                started = time.perf_counter()
                found = collection.query(
                    query_embeddings=[vector.tolist()],
                    n_results=args.k,
                    where=where,
                    include=["metadatas", "distances"],
                )
                latencies.setdefault(name, []).append(time.perf_counter() - started)
                if where is not None and name == "$contains list":
                    names = {*caller, "*"}
                    assert all(set(m["access"]) & names for m in found["metadatas"][0])
                    assert len(found["ids"][0]) == args.k
            started = time.perf_counter()
            post_filter(collection, vector.tolist(), args.k, {*caller, "*"})
            latencies.setdefault(POST, []).append(time.perf_counter() - started)
            if q < 20:
                names = {*caller, "*"}
                allowed.append(sum(bool(set(d) & names) for d in docs) / len(docs))
        rows = []
        base = None
        for name, values in latencies.items():
            cuts = statistics.quantiles(values[5:], n=20, method="inclusive")
            row = {
                "form": name,
                "p50_ms": round(statistics.median(values[5:]) * 1000, 2),
                "p95_ms": round(cuts[18] * 1000, 2),
            }
            base = base or row["p95_ms"]
            row["p95_ratio"] = round(row["p95_ms"] / base, 2)
            rows.append(row)
            print(json.dumps(row, ensure_ascii=False))
        print(
            f"callers may read {statistics.mean(allowed):.0%} of the documents on average; "
            f"{len(sets)} distinct reader sets"
        )
        if args.json:
            args.json.write_text(json.dumps(rows, ensure_ascii=False, indent=1) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
