"""Load on the read path: ragingest's retriever (hybrid + parents) against plain
``langchain_chroma.Chroma.similarity_search`` on the same collection, at 1, 8 and 32
concurrent clients, embedded and against ``chroma run``.

The collection: ``--chunks`` chunks (100 000 by default) of three sentences each drawn at random
from the shared eval corpora (distinct texts; 4 chunks to a parent section, 8 to a file),
written through the public write path (``open_store`` → ``ChunkStore.add_documents``:
Chroma, the lexical index and the parents) with precomputed vectors: a cheap deterministic
stand-in for the model (seeded unit vectors), recorded under the real model's identity, so
building does not embed 100 000 texts on a small machine. The QUERY embedding is the real
model's in both arms, counted in each latency. Each cell: ``--queries`` questions (the eval
sets' questions interleaved, cycled) spread over the clients (threads), after a warm-up;
p50/p95 latency, queries per second and the load average. Before the cells, each arm answers
every question the cells ask once (the retriever's lexical term cache warm, as in a reader
that has served these before; what a cold first call costs is in bench/README.md). The two
arms of a concurrency run back to back, so the machine's load drifts little between the two
numbers of a ratio.

    .venv/bin/python -m bench.serve [--chunks 100000] [--clients 1 8 32] [--queries 640]
        [--modes embedded server] [--work DIR] [--json FILE] [--filtered [--narrow]]

``--filtered``: a collection whose chunks carry access lists, the retriever unfiltered against
the retriever reading as a signed-in caller (``bench/serve_access.py``) instead of the two arms
above.

``--work`` keeps the built collections (and the server's data) for the next run.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import itertools
import json
import os
import re
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import SHARED, corpus_texts

COLLECTION = "serve"
DIM = 384  # multilingual-e5-small
BATCH = 2000


class StandInEmbeddings:
    """The real model's identity (name, fingerprint) with seeded unit vectors: the collection
    opens as that model's; only the query side embeds for real."""

    def __init__(self) -> None:
        from ragingest.vectorstore.chroma.store import model_identity

        self.model_name, self.fingerprint = model_identity(None)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        raise RuntimeError("the bench gives every vector")

    def embed_query(self, text: str) -> list[float]:
        raise RuntimeError("queries go through the real model")


def sentences() -> list[str]:
    out = []
    for _stem, text in corpus_texts():
        out.extend(s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if len(s.strip()) > 40)
    return out


def chunk_text(pool: list[str], rng: Any) -> str:
    """Three sentences drawn from the corpus: distinct chunks (copies of one paragraph would
    be near-duplicates, which the retriever drops and then searches deeper for)."""
    return " ".join(pool[i] for i in rng.integers(0, len(pool), 3))


def build(store: Any, chunks: int, access: Callable[[int], list[str]] | None = None) -> None:
    """Write ``chunks`` chunks (module docstring) through ``store.add_documents``; ``access``:
    each file's readers, stored on its chunks (``--filtered``)."""
    from langchain_core.documents import Document

    pool = sentences()
    rng = np.random.default_rng(21)
    for first in range(0, chunks, BATCH):
        docs, parents = [], []
        numbers = range(first, min(first + BATCH, chunks))
        for n in numbers:
            file, parent = n // 8, n // 4
            if n % 4 == 0:
                group = [chunk_text(pool, rng) for _ in range(4)]
            parent_text = "\n\n".join(group)
            offset = sum(len(t) + 2 for t in group[: n % 4])
            text = group[n % 4]
            parent_start = (parent % 2) * 100_000
            meta = {
                "source": f"file_{file:05d}.md",
                "doc_id": f"{file:016x}",
                "section_path": f"Файл {file} > Раздел {parent % 2}",
                "chunk_index": n % 8,
                "start_index": parent_start + offset,
                "end_index": parent_start + offset + len(text),
                "parent_id": f"p{parent:015x}",
                "parent_start": parent_start,
                "parent_end": parent_start + len(parent_text),
            }
            if access is not None:
                meta["access"] = access(file)
            docs.append(Document(page_content=text, metadata=meta, id=f"c{n:07d}"))
            parents.append(parent_text)
        block = rng.standard_normal((len(docs), DIM)).astype(np.float32)
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        vectors = block.tolist()
        store.add_documents(docs, ids=[d.id for d in docs], parent_texts=parents, vectors=vectors)
        print(f"  built {first + len(docs)} chunks", file=sys.stderr, flush=True)


def questions() -> list[str]:
    """The eval sets' questions, interleaved (one of each set in turn, then the longer set's
    rest), so the first ``--queries`` mix the languages."""
    sets = []
    for path in sorted((SHARED / "eval").glob("*/questions*.csv")):
        with path.open(encoding="utf-8") as handle:
            rows = csv.DictReader(handle)
            found = [(r.get("question") or r.get("Question") or "").strip() for r in rows]
            sets.append([text for text in found if text])
    mixed = [text for group in itertools.zip_longest(*sets) for text in group if text]
    if not mixed:
        raise SystemExit("no questions in ../shared/eval/*/questions*.csv")
    return mixed


@contextlib.contextmanager
def chroma_run(folder: Path) -> Iterator[Any]:
    """``chroma run`` on 127.0.0.1 (a free port), data in ``folder``, stopped by pid."""
    from tests.chroma import chroma_server

    folder.mkdir(parents=True, exist_ok=True)
    with chroma_server(folder) as server:
        yield server


def measure(call: Callable[[str], Any], texts: list[str], clients: int, total: int) -> dict:
    """``total`` calls over ``clients`` threads: p50/p95 latency (ms) and queries per second."""
    for text in texts[:3]:
        call(text)  # warm-up: model session, caches, connections
    latencies: list[float] = []
    lock = threading.Lock()
    counter = iter(range(total))

    def client() -> None:
        while True:
            with lock:
                n = next(counter, None)
            if n is None:
                return
            started = time.perf_counter()
            call(texts[n % len(texts)])
            elapsed = time.perf_counter() - started
            with lock:
                latencies.append(elapsed)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    cuts = statistics.quantiles(latencies, n=20, method="inclusive")
    return {
        "p50_ms": round(statistics.median(latencies) * 1000, 1),
        "p95_ms": round(cuts[18] * 1000, 1),
        "qps": round(total / wall, 1),
    }


def arms(persist: Path, server: Any) -> dict[str, Callable[[str], Any]]:
    """The two callables on one collection: the retriever and plain dense search."""
    from langchain_chroma import Chroma

    import ragingest
    from ragingest.models.embeddings import SentenceTransformerEmbeddings

    options: dict[str, Any] = {"persist_dir": persist, "collection": COLLECTION}
    if server is not None:
        options |= {"chroma_host": server.host, "chroma_port": server.port}
    retriever = ragingest.retriever(**options)  # k 4, hybrid, parents: the defaults
    from ragingest.vectorstore.chroma.collection_info import chroma_client

    client = server.client() if server is not None else chroma_client(persist)
    plain = Chroma(
        collection_name=retriever.store.inner.name,
        client=client,
        embedding_function=SentenceTransformerEmbeddings(),
    )
    return {
        "ragingest retriever (hybrid + parents)": retriever.invoke,
        "Chroma.similarity_search": lambda q: plain.similarity_search(q, k=4),
    }


def run_mode(mode: str, work: Path, args: argparse.Namespace) -> list[dict]:
    from bench import serve_access
    from ragingest.vectorstore.chroma.store import open_store

    persist = work / mode
    name = COLLECTION + ("_acl" if args.filtered else "")
    access = serve_access.readers if args.filtered else None
    settings = serve_access.store_settings() if args.filtered else None
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(chroma_run(work / "server")) if mode == "server" else None
        client = server.client() if server is not None else None
        opened = dict(settings=settings, client=client)
        store = open_store(persist, name, StandInEmbeddings(), **opened)
        if store.count() != args.chunks:
            if store.count():
                store.delete_collection()
                store = open_store(persist, name, StandInEmbeddings(), **opened)
            started = time.perf_counter()
            build(store, args.chunks, access)
            print(f"{mode}: built in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        texts = questions()
        rows = []
        if args.filtered:
            options: dict[str, Any] = {"persist_dir": persist, "collection": name}
            if server is not None:
                options |= {"chroma_host": server.host, "chroma_port": server.port}
            reader = None
            if args.prototypes is not None:
                reader = open_store(persist, name, create=False, server=server)
            ways = args.prototypes or ["post", "cached"]
            callables = serve_access.filtered_arms(options, args.narrow, reader, ways)
        else:
            callables = arms(persist, server)
        asked = texts[: max(args.queries, 4 * max(args.clients))]
        for call in callables.values():  # caches warm, as in a reader serving these before
            for text in dict.fromkeys(asked):
                call(text)
        for clients in args.clients:  # both arms of a cell back to back: load drift cancels
            for name, call in callables.items():
                total = max(args.queries, 4 * clients)
                cell = {"mode": mode, "arm": name, "clients": clients, "queries": total}
                cell |= measure(call, texts, clients, total)
                cell["load_1min"] = round(os.getloadavg()[0], 1)
                print(json.dumps(cell, ensure_ascii=False), file=sys.stderr, flush=True)
                rows.append(cell)
        return rows


def table(rows: list[dict], filtered: bool = False) -> str:
    """The markdown table: the retriever over plain, or (``filtered``) each filtered arm over
    the unfiltered retriever."""
    mine_name, base_name = ("filtered", "unfiltered") if filtered else ("retriever", "plain")
    lines = [
        f"| mode | clients | {mine_name} p50 / p95 ms | {base_name} p50 / p95 ms | p95 ratio "
        f"| QPS {mine_name} / {base_name} | load (1 min) |",
        "|---|---|---|---|---|---|---|",
    ]
    is_base = (
        (lambda arm: arm.endswith("unfiltered"))
        if filtered
        else (lambda arm: not arm.startswith("ragingest"))
    )
    bases = {(r["mode"], r["clients"]): r for r in rows if is_base(r["arm"])}
    ordered = sorted(rows, key=lambda r: (r["mode"] != "embedded", r["clients"]))
    for mine in (r for r in ordered if not is_base(r["arm"])):
        plain = bases[(mine["mode"], mine["clients"])]
        arm = mine["arm"].removeprefix("retriever, as a caller") if filtered else ""
        label = f"{mine['clients']}{' (' + arm.strip(', ') + ')' if arm else ''}"
        lines.append(
            f"| {mine['mode']} | {label} | {mine['p50_ms']} / {mine['p95_ms']} | "
            f"{plain['p50_ms']} / {plain['p95_ms']} | {mine['p95_ms'] / plain['p95_ms']:.2f} | "
            f"{mine['qps']} / {plain['qps']} | {mine.get('load_1min', '')} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument(
        "--queries", type=int, default=640, help="calls per cell (at least 4 per client)"
    )
    parser.add_argument(
        "--modes", nargs="+", default=["embedded", "server"], choices=["embedded", "server"]
    )
    parser.add_argument(
        "--work", type=Path, help="keep the collections here (default: a temp folder)"
    )
    parser.add_argument("--json", type=Path)
    parser.add_argument("--filtered", action="store_true", help="access lists, read as a caller")
    parser.add_argument("--narrow", action="store_true", help="callers of one group each")
    parser.add_argument(
        "--prototypes",
        nargs="*",
        choices=["post", "cached"],
        help="with --filtered: bench/acl_postfilter.py's ways too (none named: both)",
    )
    parser.add_argument("--pool", type=int, help="acl_postfilter.POOL: the dense pool")
    args = parser.parse_args(argv)
    if args.pool:
        from bench import acl_postfilter

        acl_postfilter.POOL = args.pool
    with contextlib.ExitStack() as stack:
        work = args.work or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="serve-")))
        rows = [row for mode in args.modes for row in run_mode(mode, work, args)]
    if args.json:
        args.json.write_text(json.dumps(rows, ensure_ascii=False, indent=1) + "\n", "utf-8")
    print(table(rows, args.filtered))
    return 0


if __name__ == "__main__":
    sys.exit(main())
