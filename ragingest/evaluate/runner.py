"""``ragingest evaluate``: chunking configurations scored on a question set, the way Chroma's
report does it: a chunking is good if it returns the evidence on your own test set.

Contract: every corpus file is read as is (``data``) and cut by each configuration's splitter
(``chunking``: ours, or a plain baseline); each question retrieves its top ``k`` over all
chunks of all files by exact cosine to the model's query embedding (``retrieval``), or
(``search="hybrid"``, the retriever's default) by that fused with BM25 over a fresh lexical
index, both lists ``retrieval.search.candidate_depth(k)`` deep as in ``ragingest.retriever``;
``metrics`` scores every question and the table (``results``) shows mean ± std, and R@k per
question kind where the set has kinds. Embeddings are cached by text hash (``cache``). Without
a model (``embed=False``) only what needs none is computed: chunk
statistics, ``precision_omega`` and the share of references that lie whole in one chunk.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from ragingest.defaults import EVALUATE_K, EVALUATE_SEARCHES
from ragingest.evaluate import metrics as m
from ragingest.evaluate.cache import EmbeddingCache
from ragingest.evaluate.chunking import EvalChunk, build_splitter, default_chunk_size, split_corpus
from ragingest.evaluate.configs import DEFAULT, Config, baseline_config, configurations
from ragingest.evaluate.data import Question, load_corpus, load_questions
from ragingest.evaluate.metrics import Hit
from ragingest.evaluate.results import ConfigResult, Evaluation, format_table
from ragingest.evaluate.retrieval import retrieve
from ragingest.models.locate import canonical_name
from ragingest.models.resolve import load_model_info
from ragingest.retrieval.retriever import Span, select
from ragingest.retrieval.search import candidate_depth

if TYPE_CHECKING:
    import argparse

__all__ = ["Config", "evaluate", "run_cli"]



def evaluate(
    corpus: dict[str, str],
    questions: Sequence[Question],
    configs: Iterable[Config],
    model: str | None = None,
    k: int = EVALUATE_K,
    embed: bool = True,
    cache: EmbeddingCache | None = None,
    progress: Callable[[str], None] | None = None,
    search: str = EVALUATE_SEARCHES[0],
) -> Evaluation:
    """Chunk the corpus with each configuration, retrieve ``k`` chunks per question and score
    them; ``ValueError`` for an unknown ``search``."""
    if search not in EVALUATE_SEARCHES:
        raise ValueError(f"search must be one of {', '.join(EVALUATE_SEARCHES)}, not {search!r}")
    started = time.perf_counter()
    say = progress or (lambda _msg: None)
    cache = cache if cache is not None or not embed else EmbeddingCache(model)
    query_vectors = None
    results = []
    for config in configs:
        t0 = time.perf_counter()
        embedder = None
        if config.strategy == "semantic" and cache is not None:
            embedder = lambda texts: cache.embed(texts, "sentence")  # noqa: E731
        chunks = split_corpus(build_splitter(config, model, embedder), corpus)
        result = _chunk_stats(config, chunks, questions)
        result.split_seconds = time.perf_counter() - t0
        say(
            f"{config.name}: {result.chunks} chunks, mean {result.mean_tokens:.0f} tokens "
            f"({result.split_seconds:.1f} s)"
        )
        if embed and cache is not None:
            before, t1 = cache.computed, cache.seconds
            if query_vectors is None:
                query_vectors = cache.queries([q.text for q in questions])
            vectors = cache.embed([c.embed_text for c in chunks])
            result.embedded = cache.computed - before
            result.embed_seconds = cache.seconds - t1
            say(f"  embedded {result.embedded} new texts in {result.embed_seconds:.1f} s")
            plain = config.retrieval == "chunks" and search == "dense"
            fetch = k if plain else candidate_depth(k)
            texts = [q.text for q in questions] if search == "hybrid" else None
            top = retrieve(chunks, vectors, query_vectors, fetch, texts)
            per_q: dict[str, list[float]] = {name: [] for name in m.METRICS}
            for question, ids in zip(questions, top, strict=True):
                hits = _retrieved(config, [chunks[i] for i in ids], k, corpus, model)
                for name, value in m.question_scores(question.references, hits).items():
                    per_q[name].append(value)
            result.per_question |= per_q
            result.scores |= {name: m.mean_std(values) for name, values in per_q.items()}
            result.recall_at_k_by_kind = _by_kind(questions, per_q["recall_at_k"])
        results.append(result)
    evaluation = Evaluation(
        model=canonical_name(model),
        k=k,
        questions=len(questions),
        corpus_chars=sum(len(t) for t in corpus.values()),
        results=results,
        seconds=time.perf_counter() - started,
        search=search,
    )
    if cache is not None:
        evaluation.embedded, evaluation.embed_seconds = cache.computed, cache.seconds
    return evaluation


def _hit(chunk: EvalChunk) -> Hit:
    return Hit(chunk.corpus_id, chunk.start, chunk.end, chunk.text, chunk.tokens)


def _retrieved(
    config: Config, found: list[EvalChunk], k: int, corpus: dict[str, str], model: str | None
) -> list[Hit]:
    """What the retriever returns for these nearest chunks (best first), as in
    ``ragingest.retriever``: the chunks, or with ``dedup``/``parents`` the merged spans."""
    if config.retrieval == "chunks":
        return [_hit(c) for c in found[:k]]

    spans = []
    for c in found:
        start, end = (
            (c.parent_start, c.parent_end) if config.retrieval == "parents" else (c.start, c.end)
        )
        spans.append(Span(c.corpus_id, start, end, corpus[c.corpus_id][start:end], {}, 0.0))
    chosen = select(spans, k, dedup=True)
    tokenizer = load_model_info(model).tokenizer
    sizes = [
        len(ids)
        for ids in tokenizer([s.text for s in chosen], add_special_tokens=False)["input_ids"]
    ]
    return [Hit(s.source, s.start, s.end, s.text, n) for s, n in zip(chosen, sizes, strict=True)]


def _chunk_stats(
    config: Config, chunks: Sequence[EvalChunk], questions: Sequence[Question]
) -> ConfigResult:
    by_corpus: dict[str, list[Hit]] = {}
    for chunk in chunks:
        by_corpus.setdefault(chunk.corpus_id, []).append(_hit(chunk))
    omega = [m.precision_omega(q.references, by_corpus.get(q.corpus_id, [])) for q in questions]
    whole = total = 0
    for q in questions:
        spans = [(h.start, h.end) for h in by_corpus.get(q.corpus_id, [])]
        for ref in q.references:
            total += 1
            whole += any(s <= ref.start and ref.end <= e for s, e in spans)
    tokens = [c.tokens for c in chunks] or [0]
    result = ConfigResult(
        config=config,
        chunks=len(chunks),
        mean_tokens=float(np.mean(tokens)),
        max_tokens=int(max(tokens)),
        mean_chars=float(np.mean([len(c.text) for c in chunks])) if chunks else 0.0,
        refs_whole=whole / total if total else 0.0,
    )
    result.per_question["precision_omega"] = omega
    result.scores["precision_omega"] = m.mean_std(omega)
    return result


def _by_kind(questions: Sequence[Question], values: Sequence[float]) -> dict[str, float]:
    """Mean of ``values`` per question kind (empty when the set has no kinds)."""
    groups: dict[str, list[float]] = {}
    for question, value in zip(questions, values, strict=True):
        if question.kind:
            groups.setdefault(question.kind, []).append(value)
    return {kind: sum(v) / len(v) for kind, v in sorted(groups.items())}


# -- the command ---------------------------------------------------------------------------------
def matched_baseline_size(
    corpus: dict[str, str],
    model: str | None,
    target: float,
    progress: Callable[[str], None] | None = None,
) -> int:
    """The chunk size at which LangChain's recursive splitter (no overlap, the model's
    tokenizer, at most the model's limit) gives mean chunk sizes closest to ``target``."""
    def mean_at(size: int) -> float:
        chunks = split_corpus(build_splitter(Config("recursive", size, 0), model), corpus)
        return float(np.mean([c.tokens for c in chunks])) if chunks else 0.0

    lo, hi = 8, load_model_info(model).max_embed_tokens
    means: dict[int, float] = {}
    while lo < hi:  # mean chunk size grows with the chunk size setting
        mid = (lo + hi) // 2
        means[mid] = mean_at(mid)
        if progress:
            progress(f"  recursive {mid}: mean {means[mid]:.0f} tokens (target {target:.0f})")
        if means[mid] < target:
            lo = mid + 1
        else:
            hi = mid
    means.setdefault(lo, mean_at(lo))
    return min(means, key=lambda size: (abs(means[size] - target), size))


def run_cli(args: argparse.Namespace) -> int:
    """``ragingest evaluate`` (arguments as parsed by ``ragingest.cli.main``)."""
    import sys

    corpus = load_corpus(args.corpus)
    questions = load_questions(args.questions, corpus)
    size = default_chunk_size(args.model)
    configs = configurations(size, args.sweep, args.config, args.baseline_size)

    def say(message: str) -> None:
        if not args.quiet:
            print(message, file=sys.stderr, flush=True)

    if args.baseline_size is None:  # also the baseline whose mean chunk size matches ours
        chunks = split_corpus(build_splitter(DEFAULT, args.model), corpus)
        target = float(np.mean([c.tokens for c in chunks])) if chunks else 0.0
        say(f"default: mean chunk {target:.0f} tokens; matching the recursive baseline")
        size = matched_baseline_size(corpus, args.model, target, say)
        if size != configs[1].chunk_size:
            matched = baseline_config(size, matched=True)
            present = [replace(c, label="") for c in configs]
            if replace(matched, label="") in present:
                configs.pop(present.index(replace(matched, label="")))
            configs.insert(2, matched)
    say(f"{len(questions)} questions, {len(corpus)} files, {len(configs)} configurations")
    cache = None if args.no_embed else EmbeddingCache(args.model, args.cache)
    evaluation = evaluate(
        corpus, questions, configs, args.model, args.k, not args.no_embed, cache, say, args.search
    )
    if args.html:
        from ragingest.evaluate.report_html import write_report

        write_report(evaluation, args.html)
        say(f"report: {args.html}")
    if args.json:
        print(json.dumps(evaluation.to_json(), ensure_ascii=False, indent=1))
    else:
        print(format_table(evaluation))
    return 0
