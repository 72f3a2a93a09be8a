"""``ragingest evaluate``: chunking configurations scored on a question set, the way Chroma's
report does it (seed 002: a chunking is good if it returns the evidence on your test set).

Contract: every corpus file is read as is (UTF-8; reference offsets point into that text) and
cut by the product's own splitters; all chunks of all files go into one fresh Chroma collection
(persistent, in a temporary folder, cosine space) per configuration; each question retrieves
its top ``k`` by the model's query embedding; ``metrics`` scores every question and the table
shows mean ± std. Embeddings are cached by text hash, so configurations that share chunks
embed them once (and, with ``cache_path``, once across runs). Without a model
(``embed=False``) only what needs none is computed: chunk statistics, ``precision_omega`` and
the share of references that lie whole in one chunk.
"""

from __future__ import annotations

import csv
import hashlib
import itertools
import json
import logging
import os
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ragingest.evaluate import metrics as m
from ragingest.evaluate.metrics import Hit, Reference

log = logging.getLogger(__name__)

STRATEGIES = ("heading", "semantic", "recursive", "fixed")
RETRIEVALS = ("chunks", "dedup", "parents")
CORPUS_SUFFIXES = (".md", ".txt", ".markdown")
BOOLEAN = {"on": True, "off": False, "true": True, "false": False, "1": True, "0": False}


# -- inputs ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Question:
    text: str
    corpus_id: str
    references: tuple[Reference, ...]


def load_corpus(folder: str | Path) -> dict[str, str]:
    """``{corpus_id: text}``: every ``.md``/``.txt`` file of ``folder``, id = name w/o suffix."""
    folder = Path(folder)
    files = sorted(p for p in folder.iterdir() if p.suffix.lower() in CORPUS_SUFFIXES)
    if not files:
        raise ValueError(f"no .md or .txt files in {folder}")
    return {p.stem: p.read_text(encoding="utf-8") for p in files}


def load_questions(path: str | Path, corpus: dict[str, str] | None = None) -> list[Question]:
    """Questions from a CSV (columns ``question``, ``references``, ``corpus_id``; references as
    JSON ``[{content, start_index, end_index}]``) or JSONL with the same keys. With ``corpus``,
    every reference must match its text exactly."""
    path = Path(path)
    if path.suffix.lower() in (".jsonl", ".json"):
        lines = path.read_text(encoding="utf-8").splitlines()
        rows = [json.loads(line) for line in lines if line.strip()]
    else:
        with path.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))
    questions = []
    for number, row in enumerate(rows, 1):
        refs = row["references"]
        refs = json.loads(refs) if isinstance(refs, str) else refs
        corpus_id = str(row["corpus_id"])
        corpus_id = corpus_id[:-3] if corpus_id.endswith(".md") else corpus_id
        references = tuple(
            Reference(corpus_id, int(r["start_index"]), int(r["end_index"])) for r in refs
        )
        if not references:
            raise ValueError(f"{path}: question {number} has no references")
        if corpus is not None:
            if corpus_id not in corpus:
                raise ValueError(f"{path}: question {number}: no corpus file {corpus_id!r}")
            for ref, raw in zip(references, refs, strict=True):
                content = raw.get("content")
                if content is not None and corpus[corpus_id][ref.start : ref.end] != content:
                    raise ValueError(
                        f"{path}: question {number}: reference [{ref.start}, {ref.end}) does "
                        f"not match the text of {corpus_id}"
                    )
        questions.append(Question(str(row["question"]), corpus_id, references))
    return questions


# -- configurations ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Config:
    """One way to cut the corpus. ``None`` means the splitter's default."""

    strategy: str = "heading"
    chunk_size: int | None = None
    chunk_overlap: int | None = None
    min_chunk_size: int | None = None
    context_prefix: bool = True
    retrieval: str = "chunks"  # chunks: plain top k | dedup | parents (the retriever's modes)
    parent_chunk_size: int | None = None
    label: str = ""

    @property
    def name(self) -> str:
        if self.label:
            return self.label
        parts = [self.strategy]
        if self.chunk_size is not None:
            parts.append(f"size={self.chunk_size}")
        if self.chunk_overlap is not None:
            parts.append(f"overlap={self.chunk_overlap}")
        if self.strategy in ("heading", "semantic"):
            if self.min_chunk_size is not None:
                parts.append(f"min={self.min_chunk_size}")
            if not self.context_prefix:
                parts.append("prefix=off")
            if self.parent_chunk_size is not None:
                parts.append(f"parent={self.parent_chunk_size}")
        if self.retrieval != "chunks":
            parts.append(f"retrieval={self.retrieval}")
        return " ".join(parts)

    def normalized(self) -> Config:
        """Settings a strategy ignores are dropped, so a grid has no duplicate rows."""
        if self.strategy in ("recursive", "fixed"):
            return replace(self, min_chunk_size=None, context_prefix=True, parent_chunk_size=None)
        return self


DEFAULT = Config(label="default")

_AXES = {
    "strategy": str,
    "chunk_size": int,
    "chunk_overlap": int,
    "min_chunk_size": int,
    "context_prefix": lambda v: BOOLEAN[v.lower()],
    "retrieval": str,
    "parent_chunk_size": int,
}
_ALIASES = {"size": "chunk_size", "overlap": "chunk_overlap", "min": "min_chunk_size"}
_ALIASES |= {
    "min_size": "min_chunk_size",
    "prefix": "context_prefix",
    "parent": "parent_chunk_size",
}


def parse_sweep(axes: Sequence[str]) -> list[Config]:
    """``["strategy=heading,recursive", "chunk_size=128,256", "prefix=on,off"]`` → the grid."""
    grid: dict[str, list[Any]] = {}
    for axis in axes:
        key, sep, values = axis.partition("=")
        key = _ALIASES.get(key.strip(), key.strip()).replace("-", "_")
        if not sep or key not in _AXES:
            raise ValueError(f"bad sweep axis {axis!r}: use one of {', '.join(_AXES)}=v1,v2")
        try:
            grid[key] = [_AXES[key](v.strip()) for v in values.split(",") if v.strip()]
        except (KeyError, ValueError) as exc:
            raise ValueError(f"bad value in sweep axis {axis!r}") from exc
        if key == "strategy" and (bad := set(grid[key]) - set(STRATEGIES)):
            raise ValueError(f"unknown strategy {sorted(bad)}: use {', '.join(STRATEGIES)}")
        if key == "retrieval" and (bad := set(grid[key]) - set(RETRIEVALS)):
            raise ValueError(f"unknown retrieval {sorted(bad)}: use {', '.join(RETRIEVALS)}")
    keys = list(grid)
    configs: list[Config] = []
    for values in itertools.product(*(grid[k] for k in keys)):
        config = Config(**dict(zip(keys, values, strict=True))).normalized()
        if config not in configs:
            configs.append(config)
    return configs


def parse_config(spec: str) -> Config:
    """``"heading:size=128,overlap=0,min=32,prefix=off"`` → one ``Config``."""
    strategy, _, rest = spec.partition(":")
    values: dict[str, Any] = {"strategy": strategy.strip()}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, sep, value = item.partition("=")
        key = _ALIASES.get(key.strip(), key.strip()).replace("-", "_")
        if not sep or key not in _AXES or key == "strategy":
            raise ValueError(f"bad setting {item!r} in {spec!r}")
        values[key] = _AXES[key](value.strip())
    if values["strategy"] not in STRATEGIES:
        raise ValueError(f"unknown strategy in {spec!r}: use {', '.join(STRATEGIES)}")
    if values.get("retrieval", "chunks") not in RETRIEVALS:
        raise ValueError(f"unknown retrieval in {spec!r}: use {', '.join(RETRIEVALS)}")
    return Config(**values).normalized()


# -- splitting ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class EvalChunk:
    corpus_id: str
    start: int
    end: int
    text: str
    embed_text: str
    tokens: int
    parent_start: int
    parent_end: int


def build_splitter(config: Config, model: str | None, embedder: Any = None) -> Any:
    """The product's splitter for ``config``, sizes in ``model``'s tokens."""
    from ragingest.splitters import FixedSizeSplitter, HeadingFirstSplitter
    from ragingest.splitters.heading_first import DEFAULT_CHUNK_SIZE, DEFAULT_MIN_CHUNK_SIZE
    from ragingest.splitters.recursive import RecursiveBaseline
    from ragingest.vectorstore.models import load_model_info

    info = load_model_info(model)
    if config.strategy in ("heading", "semantic"):
        extra: dict[str, Any] = {}
        if config.strategy == "semantic":
            from ragingest.splitters.semantic import SemanticBoundaries

            extra["fallback"] = SemanticBoundaries(embedder or _sentence_embedder(model))
        return HeadingFirstSplitter(
            config.chunk_size,
            config.chunk_overlap,
            DEFAULT_MIN_CHUNK_SIZE if config.min_chunk_size is None else config.min_chunk_size,
            tokenizer=info.tokenizer,
            max_embed_tokens=info.max_embed_tokens,
            context_prefix=config.context_prefix,
            parent_chunk_size=config.parent_chunk_size,
            **extra,
        )
    size = min(config.chunk_size or DEFAULT_CHUNK_SIZE, info.max_embed_tokens)
    overlap = config.chunk_overlap or 0
    if config.strategy == "recursive":
        return RecursiveBaseline(size, overlap, "tokens", info.tokenizer)
    return FixedSizeSplitter(size, overlap, "tokens", tokenizer=info.tokenizer)


def _sentence_embedder(model: str | None) -> Callable[[list[str]], np.ndarray]:
    from ragingest.vectorstore.embeddings import SentenceTransformerEmbeddings

    embeddings = SentenceTransformerEmbeddings(model)
    return lambda texts: np.asarray(embeddings.embed_documents(texts), dtype=np.float32)


def split_corpus(splitter: Any, corpus: dict[str, str]) -> list[EvalChunk]:
    chunks = []
    for corpus_id, text in corpus.items():
        for c in splitter.split_chunks(text):
            chunks.append(
                EvalChunk(
                    corpus_id,
                    c.start_index,
                    c.end_index,
                    c.text,
                    c.embed_text,
                    c.token_count,
                    *c.parent_span,
                )
            )
    return chunks


# -- embeddings ----------------------------------------------------------------------------------
class EmbeddingCache:
    """Embeddings by (model, role, text) hash: in memory, and in SQLite at ``path`` if given."""

    def __init__(self, model: str | None, path: str | Path | None = None) -> None:
        from ragingest.vectorstore.models import load_model_info

        self.model = model
        self.info = load_model_info(model)
        self._memory: dict[str, np.ndarray] = {}
        self._db: sqlite3.Connection | None = None
        self._embeddings: Any = None
        self.computed = 0
        self.seconds = 0.0
        if path:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(path))
            self._db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, v BLOB)")

    def _key(self, role: str, text: str) -> str:
        raw = "\x1f".join((self.info.fingerprint, role, text)).encode("utf-8")
        return hashlib.sha256(raw).hexdigest()

    def _load(self, keys: list[str]) -> None:
        if self._db is None:
            return
        missing = [k for k in keys if k not in self._memory]
        for i in range(0, len(missing), 500):
            batch = missing[i : i + 500]
            marks = ",".join("?" * len(batch))
            rows = self._db.execute(f"SELECT key, v FROM vectors WHERE key IN ({marks})", batch)
            for key, blob in rows:
                self._memory[key] = np.frombuffer(blob, dtype=np.float32)

    def embed(self, texts: Sequence[str], role: str = "document") -> np.ndarray:
        """One row per text, L2-normalized, with the model's document prompt; ``role`` only
        keeps apart texts embedded for different uses (chunks, semantic sentence windows)."""
        keys = [self._key(role, t) for t in texts]
        self._fill(keys, texts, lambda batch: self._model().embed_documents(batch))
        if not keys:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self._memory[k] for k in keys])

    def queries(self, texts: Sequence[str]) -> np.ndarray:
        """Query embeddings: one model call per batch, with the query prompt."""
        keys = [self._key("query", t) for t in texts]

        def encode(batch: list[str]) -> Any:
            return self._model().model.encode(
                batch,
                prompt=self.info.query_prompt or None,
                batch_size=64,
                normalize_embeddings=True,
                convert_to_numpy=True,
            )

        self._fill(keys, texts, encode)
        return np.stack([self._memory[k] for k in keys])

    def _model(self) -> Any:
        if self._embeddings is None:
            from ragingest.vectorstore.embeddings import SentenceTransformerEmbeddings

            self._embeddings = SentenceTransformerEmbeddings(self.model, batch_size=64)
        return self._embeddings

    def _fill(self, keys: list[str], texts: Sequence[str], encode: Any) -> None:
        """Vectors of the ``keys`` not cached yet, from ``encode`` (timed, counted, stored)."""
        self._load(keys)
        todo: dict[str, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key not in self._memory:
                todo.setdefault(key, text)
        if not todo:
            return
        started = time.perf_counter()
        vectors = np.asarray(encode(list(todo.values())), dtype=np.float32)
        self.seconds += time.perf_counter() - started
        self.computed += len(todo)
        for key, vector in zip(todo, vectors, strict=True):
            self._memory[key] = vector
        if self._db is not None:
            self._db.executemany(
                "INSERT OR REPLACE INTO vectors VALUES (?, ?)",
                [(k, self._memory[k].tobytes()) for k in todo],
            )
            self._db.commit()


# -- retrieval -----------------------------------------------------------------------------------
# Cosine space as in the product, with a wider graph search: with Chroma's defaults a few % of
# the top-5 sets differed from exact search, and differently from run to run; with these, the
# top-k scores equal exact search on the Chroma eval set.
HNSW = {"hnsw:space": "cosine", "hnsw:construction_ef": 400, "hnsw:search_ef": 400}
TIE_MARGIN = 10  # extra neighbours fetched so that ties at the k-th place are seen


def _tie_key(hit: tuple[float, int]) -> tuple[float, int]:
    return round(hit[0], 6), hit[1]


def retrieve(
    chunks: Sequence[EvalChunk], vectors: np.ndarray, queries: np.ndarray, k: int
) -> list[list[int]]:
    """Top ``k`` chunk indices per query from a fresh Chroma collection in a temp folder."""
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    import chromadb
    from chromadb.config import Settings

    from ragingest.vectorstore.server import active_server

    server = active_server()  # --chroma-host: a throwaway collection on the server
    name = f"ragingest-evaluate-{os.getpid()}-{id(chunks)}" if server else "evaluate"
    with tempfile.TemporaryDirectory(prefix="ragingest-eval-") as folder:
        settings = Settings(anonymized_telemetry=False)
        client = server.client() if server else chromadb.PersistentClient(folder, settings)
        collection = client.create_collection(name, metadata=HNSW, embedding_function=None)
        step = client.get_max_batch_size()
        for i in range(0, len(chunks), step):
            batch = chunks[i : i + step]
            collection.add(
                ids=[str(j) for j in range(i, i + len(batch))],
                embeddings=vectors[i : i + len(batch)],
                metadatas=[
                    {"corpus_id": c.corpus_id, "start_index": c.start, "end_index": c.end}
                    for c in batch
                ],
            )
        found: list[list[int]] = []
        extra = min(k + TIE_MARGIN, len(chunks))
        for i in range(0, len(queries), 256):
            result = collection.query(
                query_embeddings=queries[i : i + 256], n_results=extra, include=["distances"]
            )
            for ids, distances in zip(result["ids"], result["distances"], strict=True):
                # equal texts have equal vectors: break ties by position, not by chance
                ranked = sorted(zip(distances, map(int, ids), strict=True), key=_tie_key)
                found.append([j for _, j in ranked[:k]])
        if server:
            client.delete_collection(name)
        del collection, client
    return found


# -- the run -------------------------------------------------------------------------------------
@dataclass
class ConfigResult:
    config: Config
    chunks: int
    mean_tokens: float
    max_tokens: int
    mean_chars: float
    refs_whole: float  # share of references lying whole in some chunk
    scores: dict[str, tuple[float, float]] = field(default_factory=dict)  # metric → (mean, std)
    per_question: dict[str, list[float]] = field(default_factory=dict)
    split_seconds: float = 0.0
    embed_seconds: float = 0.0
    embedded: int = 0  # texts embedded for this configuration (cache misses)

    def row(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.config.name, **asdict(self.config)}
        out.pop("label")
        out |= {
            "chunks": self.chunks,
            "mean_tokens": round(self.mean_tokens, 1),
            "max_tokens": self.max_tokens,
            "mean_chars": round(self.mean_chars, 1),
            "refs_whole": round(100 * self.refs_whole, 1),
            "split_seconds": round(self.split_seconds, 2),
            "embed_seconds": round(self.embed_seconds, 2),
            "embedded": self.embedded,
        }
        for metric, (mean, std) in self.scores.items():
            scale = 1 if metric == "context_tokens" else 100
            out[f"{metric}_mean"] = round(scale * mean, 2)
            out[f"{metric}_std"] = round(scale * std, 2)
        return out


@dataclass
class Evaluation:
    model: str
    k: int
    questions: int
    corpus_chars: int
    results: list[ConfigResult]
    seconds: float = 0.0
    embedded: int = 0
    embed_seconds: float = 0.0

    def rows(self) -> list[dict[str, Any]]:
        return [r.row() for r in self.results]

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "k": self.k,
            "questions": self.questions,
            "corpus_chars": self.corpus_chars,
            "seconds": round(self.seconds, 1),
            "embedded": self.embedded,
            "embed_seconds": round(self.embed_seconds, 1),
            "results": self.rows(),
        }


def evaluate(
    corpus: dict[str, str],
    questions: Sequence[Question],
    configs: Iterable[Config],
    model: str | None = None,
    k: int = 5,
    embed: bool = True,
    cache: EmbeddingCache | None = None,
    progress: Callable[[str], None] | None = None,
) -> Evaluation:
    from ragingest.vectorstore.models import canonical_name

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
            fetch = k if config.retrieval == "chunks" else max(20, 4 * k)
            top = retrieve(chunks, vectors, query_vectors, fetch)
            per_q: dict[str, list[float]] = {name: [] for name in m.METRICS}
            for question, ids in zip(questions, top, strict=True):
                hits = _retrieved(config, [chunks[i] for i in ids], k, corpus, model)
                for name, value in m.question_scores(question.references, hits).items():
                    per_q[name].append(value)
            result.per_question |= per_q
            result.scores |= {name: m.mean_std(values) for name, values in per_q.items()}
        results.append(result)
    evaluation = Evaluation(
        model=canonical_name(model),
        k=k,
        questions=len(questions),
        corpus_chars=sum(len(t) for t in corpus.values()),
        results=results,
        seconds=time.perf_counter() - started,
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
    from ragingest.vectorstore.models import load_model_info
    from ragingest.vectorstore.retriever import Span, select

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


# -- the table -------------------------------------------------------------------------------------
COLUMNS = (
    ("recall", "recall"),
    ("precision", "prec"),
    ("iou", "IoU"),
    ("precision_omega", "prec_Ω"),
    ("recall_at_k", "R@k"),
    ("mrr", "MRR"),
    ("duplicate_rate", "dup"),
    ("context_tokens", "ctx_tok"),
)


def format_table(evaluation: Evaluation) -> str:
    rows = evaluation.rows()
    width = max([len("configuration"), *(len(r["name"]) for r in rows)])
    shown = [(key, title) for key, title in COLUMNS if f"{key}_mean" in rows[0]]
    head = f"{'configuration':<{width}}  {'chunks':>6} {'tokens':>6} "
    head += " ".join(f"{title:>13}" for _, title in shown)
    lines = [
        f"{evaluation.questions} questions, {evaluation.corpus_chars} characters, "
        f"model {evaluation.model}, k={evaluation.k}; mean ± std over questions",
        head,
        "-" * len(head),
    ]
    for r in rows:
        line = f"{r['name']:<{width}}  {r['chunks']:>6} {r['mean_tokens']:>6.1f} "
        cells = []
        for key, _ in shown:
            mean, std = r[f"{key}_mean"], r[f"{key}_std"]
            cells.append(
                f"{mean:>6.1f} ± {std:<4.1f}" if key != "context_tokens" else f"{mean:>13.0f}"
            )
        lines.append(line + " ".join(cells))
    lines.append(
        f"embedded {evaluation.embedded} texts in {evaluation.embed_seconds:.0f} s; "
        f"total {evaluation.seconds:.0f} s"
    )
    return "\n".join(lines)


# -- the command ---------------------------------------------------------------------------------
def default_chunk_size(model: str | None) -> int:
    """The chunk size the default configuration ends up with for ``model`` (after the cap)."""
    from ragingest.splitters import HeadingFirstSplitter
    from ragingest.vectorstore.models import load_model_info

    info = load_model_info(model)
    splitter = HeadingFirstSplitter(
        tokenizer=info.tokenizer, max_embed_tokens=info.max_embed_tokens
    )
    return splitter._chunk_size


def matched_baseline_size(
    corpus: dict[str, str],
    model: str | None,
    target: float,
    progress: Callable[[str], None] | None = None,
) -> int:
    """The chunk size at which LangChain's recursive splitter (no overlap, the model's
    tokenizer, at most the model's limit) gives mean chunk sizes closest to ``target``."""
    from ragingest.vectorstore.models import load_model_info

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


def configurations(
    model: str | None,
    sweep: Sequence[str] = (),
    extra: Sequence[str] = (),
    baseline_size: int | None = None,
) -> list[Config]:
    """The default, LangChain's recursive baseline (at the default's chunk size, or at
    ``baseline_size``), then ``extra`` and the ``sweep`` grid."""
    size = baseline_size or default_chunk_size(model)
    configs = [DEFAULT, baseline_config(size)]
    for config in [*(parse_config(s) for s in extra), *parse_sweep(sweep)]:
        same = replace(config, label="") in {replace(c, label="") for c in configs}
        if not same:
            configs.append(config)
    return configs


def baseline_config(size: int, matched: bool = False) -> Config:
    note = " (mean size matched)" if matched else ""
    return Config("recursive", size, 0, label=f"baseline: LangChain recursive {size}/0{note}")


def run_cli(args: Any) -> int:
    """``ragingest evaluate`` (arguments as parsed by ``ragingest.ingest.cli``)."""
    import sys

    corpus = load_corpus(args.corpus)
    questions = load_questions(args.questions, corpus)
    configs = configurations(args.model, args.sweep, args.config, args.baseline_size)

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
        corpus, questions, configs, args.model, args.k, not args.no_embed, cache, say
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
