"""Every splitter at an equal budget: ragingest end to end against plain splitters, one harness.

``python -m bench.context [--sets clickhouse_ru,chroma_general,PATH] [--budgets 512,1024,2048]
[--peers recursive,semchunk,chonkie,llamaindex,langchain] [--fusion rrf|dbsf] [--option KEY=JSON]
[--also KEY=JSON] [--limit N] [--work DIR] [--out FILE]``

Every splitter cuts at 200 tokens of the embedding model (multilingual-e5-small, no special
tokens) and every chunk is an exact slice of its file, except ``langchain``: the pipeline a
LangChain user writes for Markdown, ``MarkdownHeaderTextSplitter`` (h1–h3, headers kept) then
``RecursiveCharacterTextSplitter(1000, 100)`` in characters, embedding LangChain's text and
mapped back to its source slice (``ragingest.evaluate.baselines.LangChainMarkdownBaseline``).
Per set (a folder with ``corpora/`` and ``questions.csv`` or ``questions_df.csv``; a name is
looked up in ``../shared/eval`` and ``bench/data``), per splitter:

- **dense**: the 5 nearest chunks by exact cosine; R@5 (every reference inside the top 5) and
  MRR (``ragingest.evaluate.metrics``);
- **hybrid**: the same vectors and BM25 over each chunk's embedded text (the product's
  ``LexicalIndex`` and analyzer), both 20 deep, fused by ``reciprocal_rank_fusion``
  (rrf_k = 60; ``--fusion dbsf``: ``distribution_score_fusion``), first 5 scored
  (``ragingest.evaluate.retrieval``): the same for everyone;
- **context @ N**: the share of questions whose every reference lies whole inside one
  passage of a context of at most N cl100k tokens; passages are taken best first, each whole,
  while they fit (``ragingest.retrieval.context.fit_budget``), at most 20 of them; beside
  each, ``chars@N`` and ``tokens@N``: the mean context characters and cl100k tokens a
  question (a row that wins by a longer context shows it);
- **context @ plain chars** (``context@2441ch``): the same at an equal context, a budget of
  the characters the plain LangChain pipeline's context has a question (its row: ``k = 4``
  nearest by cosine, ``context@k4``; ``bench.context_chars``), the product with
  ``tokenizer=len``; the margins name it ``context@plain chars`` (over the best peer at the
  same characters) and ``context@plain chars vs its k=4`` (over the pipeline as written).

Every row is scored twice: with each reference's edge whitespace trimmed (the main reading:
a splitter that strips its chunks' edges can never hold a reference that starts with the space
before a sentence, one that keeps it can) and with the references as the questions file gives
them (``raw``, reported beside it). The rule is the same for every row; the chunks, vectors and
rankings are the same for both readings.

The plain splitters (``ragingest.evaluate.baselines``) rank with the hybrid search above, 80
deep (the depth ``ragingest.retriever`` pools for 20 passages). The ``ragingest`` rows are the
product: dense and hybrid are ``ragingest evaluate``'s default configuration in the same
harness; ``ragingest (product)`` is ``ragingest ingest`` into a real Chroma directory and
``ragingest.retriever`` — dense/hybrid with ``k=5, parents=False, dedup=False``, context with
``max_context_tokens=N, tokenizer="tiktoken:cl100k_base", k=20`` and its defaults otherwise
(passages placed in their file by their text); ``--option KEY=JSON`` passes a retriever
option to its context rows (``fusion`` and ``dense_weight`` to its hybrid row too);
``--also KEY=JSON`` adds a second product context row with that option on the same collection
(``--also second_stage='"sentences"'``: the rows with and without a second stage).
Embeddings are cached in ``--work`` (``EmbeddingCache`` files, and the product's own cache,
seeded with the same vectors), so a rerun only embeds chunks it has not seen; the product's
Chroma directory is emptied (cache kept) before each ingest, so a changed splitter is always
re-run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import ROOT, SHARED
from bench.context_chars import PLAIN_K, Sizes, char_budget, greedy, plain_pipeline
from bench.scoring import readings, score_context, score_ranked, scores

PEERS = ("recursive", "semchunk", "chonkie", "llamaindex", "langchain")
SIZE = 200
CL100K = "tiktoken:cl100k_base"
RANK_DEPTH = 20  # what ``ragingest.retriever`` fetches for k = 5
CONTEXT_DEPTH = 80  # what it pools for k = 20 passages under a budget
MAX_PASSAGES = 20


def set_folder(name: str) -> Path:
    """A set by path, or by name under ``../shared/eval`` or ``bench/data``."""
    for folder in (Path(name), SHARED / "eval" / name, ROOT / "bench" / "data" / name):
        if (folder / "corpora").is_dir():
            return folder
    raise SystemExit(f"no set {name!r} (a folder with corpora/ and questions.csv)")


def _questions_file(folder: Path) -> Path:
    for name in ("questions.csv", "questions_df.csv", "questions.jsonl"):
        if (folder / name).exists():
            return folder / name
    raise SystemExit(f"{folder}: no questions.csv")


def peer_splitter(peer: str) -> tuple[str, Any]:
    """A plain splitter's label and instance: the baselines at ``SIZE`` tokens, or LangChain's
    Markdown pipeline at its documented 1000/100 characters."""
    from ragingest.evaluate.baselines import LangChainMarkdownBaseline
    from ragingest.evaluate.chunking import build_splitter
    from ragingest.evaluate.configs import baseline_config
    from ragingest.models.resolve import load_model_info

    if peer == "langchain":
        label = "LangChain Markdown headers + recursive 1000/100 chars"
        return label, LangChainMarkdownBaseline(load_model_info(None).tokenizer)
    config = baseline_config(SIZE, strategy=peer)
    return config.label.removeprefix("baseline: "), build_splitter(config, None)


def splitter_row(
    splitter: Any,
    corpus: dict[str, str],
    questions: list[Any],
    cache: Any,
    budgets: list[int],
    count: Any,
    fusion: str = "rrf",
    chars: int | None = None,
) -> tuple[dict[str, Any], list[Any], Any]:
    """Dense, hybrid and context scores of one splitter's chunks (in process); ``chars``: a
    context budget in characters too (the plain pipeline's)."""
    from ragingest.evaluate import metrics as m
    from ragingest.evaluate.chunking import split_corpus
    from ragingest.evaluate.retrieval import nearest, retrieve

    chunks = split_corpus(splitter, corpus)
    vectors = cache.embed([c.embed_text for c in chunks])
    texts = [q.text for q in questions]
    query_vectors = cache.queries(texts)
    hits = [m.Hit(c.corpus_id, c.start, c.end, c.text, c.tokens) for c in chunks]
    sizes = [count(c.text) for c in chunks]
    rankings = {
        "dense": nearest(vectors, query_vectors, 5),
        "hybrid": retrieve(chunks, vectors, query_vectors, RANK_DEPTH, texts, fusion),
    }
    deep = retrieve(chunks, vectors, query_vectors, CONTEXT_DEPTH, texts, fusion)
    lengths = [len(c.text) for c in chunks]
    per_q: dict[str, list[float]] = {}
    seen = Sizes()
    for n, q in enumerate(questions):
        refs = readings(q, corpus)
        for mode, ranking in rankings.items():
            score_ranked(per_q, mode, refs, [hits[i] for i in ranking[n][:5]])
        limits = [(str(b), sizes, b) for b in budgets]
        limits += [(char_budget(chars), lengths, chars)] if chars else []
        for key, size, budget in limits:
            taken = [chunks[i] for i in greedy(deep[n], size, budget, MAX_PASSAGES)]
            score_context(per_q, key, refs, [(c.corpus_id, c.start, c.end) for c in taken])
            seen.add(key, [c.text for c in taken], count)
    row = scores(per_q) | seen.row() | _sizes(chunks, sizes)
    return row, chunks, vectors


def _sizes(chunks: list[Any], cl100k: list[int]) -> dict[str, Any]:
    n = max(len(chunks), 1)
    return {
        "chunks": len(chunks),
        "mean e5 tokens": round(sum(c.tokens for c in chunks) / n, 1),
        "mean cl100k tokens": round(sum(cl100k) / n, 1),
    }


def seed_product_cache(persist: Path, chunks: list[Any], vectors: Any) -> None:
    """Put the vectors already computed for these embedded texts into the product's embedding
    cache (same model, backend and prompt, so the same vectors), so ingest need not redo them."""
    import numpy as np

    from ragingest.models.resolve import load_model_info
    from ragingest.vectorstore.cache import CACHE_FILE, LEGACY, NAMESPACE, cache_key
    from ragingest.vectorstore.records.kv import kv_store

    fingerprint = load_model_info(None).fingerprint
    pairs = {
        cache_key(fingerprint, c.embed_text): np.asarray(v, "<f4").tobytes()
        for c, v in zip(chunks, vectors, strict=True)
    }
    kv_store(persist, None, CACHE_FILE, NAMESPACE, LEGACY).mset(list(pairs.items()))


def product_row(
    folder: Path,
    corpus: dict[str, str],
    questions: list[Any],
    persist: Path,
    budgets: list[int],
    options: dict[str, Any],
    count: Any = None,
    chars: int | None = None,
) -> dict[str, Any]:
    """``ragingest ingest`` + ``ragingest.retriever``, scored like the others (``chars``: at
    that many characters too, ``tokenizer=len``)."""
    import ragingest
    from bench.hybrid import located
    from ragingest.cli.main import main
    from ragingest.vectorstore.cache import CACHE_FILE

    # a fresh collection each run (file stamps would skip unchanged files), the cache kept
    for path in persist.iterdir() if persist.is_dir() else []:
        if path.name != CACHE_FILE:
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    collection = "bench-context"
    argv = ["ingest", str(folder / "corpora"), "--persist-dir", str(persist)]
    if main([*argv, "--collection", collection, "--no-progress"]) != 0:
        raise SystemExit(f"ingest of {folder} failed")
    per_q: dict[str, list[float]] = {}
    ranking = {key: options[key] for key in ("fusion", "dense_weight") if key in options}
    for mode, hybrid in (("dense", False), ("hybrid", True)):
        found = ragingest.retriever(
            persist, collection, k=5, parents=False, dedup=False, hybrid=hybrid, **ranking
        )
        for q in questions:
            top = [located(d, corpus) for d in found.invoke(q.text)]
            score_ranked(per_q, mode, readings(q, corpus), top)
    ranked = scores(per_q)
    contexts = context_row(corpus, questions, persist, budgets, options, count, chars)
    return ranked | contexts | {"raw": ranked["raw"] | contexts["raw"]}


def context_row(
    corpus: dict[str, str],
    questions: list[Any],
    persist: Path,
    budgets: list[int],
    options: dict[str, Any],
    count: Any = None,
    chars: int | None = None,
) -> dict[str, Any]:
    """The product's context rows over the collection ``product_row`` ingested."""
    import ragingest
    from bench.hybrid import located

    collection = "bench-context"
    per_q: dict[str, list[float]] = {}
    seen = Sizes()
    limits: list[tuple[str, int, Any]] = [(str(b), b, CL100K) for b in budgets]
    limits += [(char_budget(chars), chars, len)] if chars else []
    for key, budget, tokenizer in limits:
        found = ragingest.retriever(
            persist,
            collection,
            k=MAX_PASSAGES,
            max_context_tokens=budget,
            tokenizer=tokenizer,
            **options,
        )
        for q in questions:
            docs = found.invoke(q.text)
            spans = [(h.corpus_id, h.start, h.end) for h in (located(d, corpus) for d in docs)]
            score_context(per_q, key, readings(q, corpus), spans)
            if count is not None:
                seen.add(key, [d.page_content for d in docs], count)
    return scores(per_q) | seen.row()


def measure(
    name: str,
    budgets: list[int],
    peers: list[str],
    work: Path,
    options: dict[str, Any],
    fusion: str = "rrf",
    limit: int | None = None,
    also: dict[str, Any] | None = None,
) -> dict[str, Any]:
    from ragingest.evaluate.cache import EmbeddingCache
    from ragingest.evaluate.chunking import build_splitter
    from ragingest.evaluate.configs import DEFAULT
    from ragingest.evaluate.data import load_corpus, load_questions
    from ragingest.retrieval.context import token_counter

    folder = set_folder(name)
    corpus = load_corpus(folder / "corpora")
    questions = load_questions(_questions_file(folder), corpus)[:limit]
    key = folder.resolve().name
    cache = EmbeddingCache(None, work / f"eval_{key}.sqlite")
    count = token_counter(CL100K)
    rows: dict[str, Any] = {}
    started = time.perf_counter()
    plain, mean_chars = plain_pipeline(corpus, questions, cache, count)
    chars = round(mean_chars)  # the plain pipeline's context a question: the equal context
    ours, chunks, vectors = splitter_row(
        build_splitter(DEFAULT, None), corpus, questions, cache, budgets, count, fusion, chars
    )
    rows["ragingest"] = ours
    persist = work / f"product_{key}"
    seed_product_cache(persist, chunks, vectors)
    rows["ragingest (product)"] = product_row(
        folder, corpus, questions, persist, budgets, options, count, chars
    )
    if also:  # the same collection, other retriever options: a row beside the product's
        label = "ragingest (product, " + ", ".join(f"{k}={v}" for k, v in also.items()) + ")"
        rows[label] = context_row(corpus, questions, persist, budgets, options | also, count, chars)
    for peer in peers:
        label, splitter = peer_splitter(peer)
        rows[label] = splitter_row(
            splitter, corpus, questions, cache, budgets, count, fusion, chars
        )[0]
        print(f"{key}: {label}: {json.dumps(rows[label])}", file=sys.stderr, flush=True)
    rows[f"LangChain pipeline as written (k = {PLAIN_K}, dense)"] = plain
    return {
        "folder": str(folder),
        "questions": len(questions),
        "plain chars": chars,
        "seconds": round(time.perf_counter() - started),
        "rows": rows,
    }


def margins(result: dict[str, Any], reading: str = "") -> dict[str, float]:
    """Per metric: ragingest minus the best plain splitter (context: the product's rows), in
    the trimmed reading, or the raw one with ``reading="raw"``."""
    rows = {name: row.get(reading, {}) if reading else row for name, row in result["rows"].items()}
    peers = [r for name, r in rows.items() if not name.startswith(("ragingest", "LangChain p"))]
    out: dict[str, float] = {}
    product = rows["ragingest (product)"]
    for metric, value in rows["ragingest"].items() if peers else ():  # --peers "": none
        if " r@5" in metric or " mrr" in metric or metric.startswith("context@"):
            ours = product[metric] if metric.startswith("context@") else value
            theirs = [p[metric] for p in peers if metric in p]
            if not theirs:
                continue
            label = "context@plain chars" if metric.endswith("ch") else metric  # same across sets
            out[label] = round(ours - max(theirs), 3)
    plain = next((r for name, r in rows.items() if name.startswith("LangChain pipeline")), None)
    equal = [m for m in product if m.startswith("context@") and m.endswith("ch")]
    if plain and equal:  # the goal: at the plain pipeline's characters, over it
        out[f"context@plain chars vs its k={PLAIN_K}"] = round(
            product[equal[0]] - plain[f"context@k{PLAIN_K}"], 3
        )
    return out


COLUMNS = ("dense r@5", "dense mrr", "hybrid r@5", "hybrid mrr")


def print_table(name: str, result: dict[str, Any], budgets: list[int]) -> None:
    keys = [*map(str, budgets), char_budget(result["plain chars"]), f"k{PLAIN_K}"]
    columns = [
        *COLUMNS,
        *(f"context@{b}" for b in keys),
        *(f"{size}@{b}" for b in keys for size in ("chars", "tokens")),
        "mean e5 tokens",
        "mean cl100k tokens",
        "chunks",
    ]
    print(
        f"\n{name} ({result['questions']} questions, {result['seconds']} s; the plain "
        f"pipeline's context: {result['plain chars']} characters a question)"
    )
    print(f"| splitter | {' | '.join(columns)} |")
    print("|---" * (len(columns) + 1) + "|")
    for label, row in result["rows"].items():
        cells = [str(row.get(c, "–")) for c in columns]
        print(f"| {label} | {' | '.join(cells)} |")
    print("margin over the best peer:", margins(result))
    raw = [c for c in columns if any(c in row["raw"] for row in result["rows"].values())]
    print(f"raw references (as the questions file gives them): | splitter | {' | '.join(raw)} |")
    for label, row in result["rows"].items():
        print(f"| {label} | {' | '.join(str(row['raw'].get(c, '–')) for c in raw)} |")
    print("raw margin over the best peer:", margins(result, "raw"))


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.context")
    parser.add_argument("--sets", default="clickhouse_ru,chroma_general")
    parser.add_argument("--budgets", default="512,1024,2048")
    parser.add_argument("--peers", default=",".join(PEERS))
    parser.add_argument(
        "--work",
        default="/tmp/ragingest-bench-context",
        help="caches and Chroma directories (kept for reruns)",
    )
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        help="a ragingest.retriever option for the context rows, KEY=JSON",
    )
    parser.add_argument(
        "--fusion",
        choices=("rrf", "dbsf"),
        default="rrf",
        help="how the harness rows fuse dense and BM25 (the product's rows: --option fusion=...)",
    )
    parser.add_argument(
        "--limit", type=int, default=None, help="the first N questions of each set (iterating)"
    )
    parser.add_argument(
        "--also",
        action="append",
        default=[],
        help="a retriever option for a second product context row on the same collection, "
        "KEY=JSON (focus=true: the row with the second stage beside the one without)",
    )
    parser.add_argument("--out", default=None, help="write the JSON here too")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    budgets = [int(b) for b in args.budgets.split(",")]
    options = {k: json.loads(v) for k, v in (o.split("=", 1) for o in args.option)}
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    peers = [p for p in args.peers.split(",") if p]
    results = {}
    for name in args.sets.split(","):
        also = {k: json.loads(v) for k, v in (o.split("=", 1) for o in args.also)}
        results[name] = measure(name, budgets, peers, work, options, args.fusion, args.limit, also)
        print_table(name, results[name], budgets)
    for reading in ("", "raw"):
        every = [m for m in (margins(r, reading) for r in results.values()) if m]
        if every:
            name = f"minimum margin across sets{' (raw references)' if reading else ''}:"
            print(f"\n{name}", {k: min(m[k] for m in every) for k in every[0]})
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
