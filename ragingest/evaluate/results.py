"""The results of ``ragingest evaluate``: per configuration, chunk statistics and mean ± std of
every metric (overall and per question kind), and the text table. The HTML report reads these
types; the runner fills them."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ragingest.evaluate.configs import Config


@dataclass
class ConfigResult:
    """The measures of one chunking configuration: chunk statistics and each metric's mean and
    standard deviation."""
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
    # per question kind: share of its questions with every reference in the top k
    recall_at_k_by_kind: dict[str, float] = field(default_factory=dict)

    def row(self) -> dict[str, Any]:
        """The result as one flat table row (configuration fields, then the measures)."""
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
        if self.recall_at_k_by_kind:
            by_kind = self.recall_at_k_by_kind.items()
            out["recall_at_k_by_kind"] = {kind: round(100 * v, 2) for kind, v in by_kind}
        return out


@dataclass
class Evaluation:
    """One evaluation run: the model, k, the corpus size, and a result per configuration."""
    model: str
    k: int
    questions: int
    corpus_chars: int
    results: list[ConfigResult]
    seconds: float = 0.0
    embedded: int = 0
    embed_seconds: float = 0.0
    search: str = "hybrid"  # dense | hybrid (BM25 fused with the vectors)

    def rows(self) -> list[dict[str, Any]]:
        """One table row per configuration, in run order."""
        return [r.row() for r in self.results]

    def to_json(self) -> dict[str, Any]:
        """The evaluation as JSON-ready data (what ``--json`` writes)."""
        return {
            "model": self.model,
            "k": self.k,
            "search": self.search,
            "questions": self.questions,
            "corpus_chars": self.corpus_chars,
            "seconds": round(self.seconds, 1),
            "embedded": self.embedded,
            "embed_seconds": round(self.embed_seconds, 1),
            "results": self.rows(),
        }


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
    """The evaluation as a text table, one line per configuration."""
    rows = evaluation.rows()
    width = max([len("configuration"), *(len(r["name"]) for r in rows)])
    shown = [(key, title) for key, title in COLUMNS if f"{key}_mean" in rows[0]]
    head = f"{'configuration':<{width}}  {'chunks':>6} {'tokens':>6} "
    head += " ".join(f"{title:>13}" for _, title in shown)
    kinds = list(rows[0].get("recall_at_k_by_kind", {}))
    head += "".join(f" {'R@k ' + kind:>{max(8, len(kind) + 4)}}" for kind in kinds)
    lines = [
        f"{evaluation.questions} questions, {evaluation.corpus_chars} characters, "
        f"model {evaluation.model}, k={evaluation.k}, {evaluation.search} search; "
        "mean ± std over questions",
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
        for kind in kinds:
            cells[-1] += f" {r['recall_at_k_by_kind'].get(kind, 0.0):>{max(8, len(kind) + 4)}.1f}"
        lines.append(line + " ".join(cells))
    lines.append(
        f"embedded {evaluation.embedded} texts in {evaluation.embed_seconds:.0f} s; "
        f"total {evaluation.seconds:.0f} s"
    )
    return "\n".join(lines)
