"""How ``bench.context`` scores a question: references in two readings (edge-trimmed, as
given), R@5 and MRR of a ranking, whether a context holds every reference whole."""

from __future__ import annotations

from typing import Any


def whole(references: Any, spans: list[tuple[str, int, int]]) -> bool:
    """Every reference inside one span of its file."""
    return all(
        any(c == r.corpus_id and s <= r.start and r.end <= e for c, s, e in spans)
        for r in references
    )


def trimmed(references: Any, corpus: dict[str, str]) -> tuple[Any, ...]:
    """Each reference without the whitespace at its edges (a blank reference as it is)."""
    from ragingest.evaluate.metrics import Reference

    out = []
    for r in references:
        text = corpus[r.corpus_id]
        start, end = r.start, r.end
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        out.append(Reference(r.corpus_id, start, end) if start < end else r)
    return tuple(out)


def readings(question: Any, corpus: dict[str, str]) -> dict[str, tuple[Any, ...]]:
    """A question's references per reading (key prefix → references)."""
    return {"": trimmed(question.references, corpus), "raw ": tuple(question.references)}


def scores(per_question: dict[str, list[float]]) -> dict[str, Any]:
    """Means per metric: the trimmed reading's at the top level, the raw one under ``raw``."""
    out: dict[str, Any] = {"raw": {}}
    for key, values in per_question.items():
        mean = sum(values) / max(len(values), 1)
        value = round(mean, 3) if key.endswith("mrr") else round(100 * mean, 1)
        if key.startswith("raw "):
            out["raw"][key.removeprefix("raw ")] = value
        else:
            out[key] = value
    return out


def score_ranked(per_q: dict[str, list[float]], mode: str, refs: Any, top: list[Any]) -> None:
    from ragingest.evaluate import metrics as m

    for prefix, references in refs.items():
        per_q.setdefault(f"{prefix}{mode} r@5", []).append(m.recall_at_k(references, top))
        per_q.setdefault(f"{prefix}{mode} mrr", []).append(m.mrr(references, top))


def score_context(per_q: dict[str, list[float]], budget: int | str, refs: Any, spans: Any) -> None:
    for prefix, references in refs.items():
        per_q.setdefault(f"{prefix}context@{budget}", []).append(whole(references, spans))
