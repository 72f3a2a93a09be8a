"""``evaluate --html``: the results table and matplotlib plots in one self-contained page.

Plots (PNG, inlined as data URIs): recall against IoU per configuration (up and to the right
is better; the default and the baseline are marked), the four Chroma metrics as bars with
their standard deviation, and the per-question IoU spread. No scripts, no external files.
"""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path
from typing import TYPE_CHECKING

from ragingest.errors import MissingExtraError
from ragingest.evaluate.results import COLUMNS, Evaluation

if TYPE_CHECKING:
    from matplotlib.figure import Figure

CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px; color: #1d2430; background: #fff; }
h1 { font-size: 20px; margin: 0 0 4px; }
.meta { color: #566; margin-bottom: 16px; }
table { border-collapse: collapse; margin: 12px 0 20px; font-size: 13px; }
td, th { border: 1px solid #d5dae2; padding: 3px 8px; text-align: right; white-space: nowrap; }
td:first-child, th:first-child { text-align: left; white-space: normal; }
th { background: #f2f4f7; }
tr.default td { background: #e8f3ff; font-weight: 600; }
tr.baseline td { background: #fff4e0; }
img { max-width: 100%; border: 1px solid #e2e6ec; border-radius: 6px; margin: 6px 0 18px; }
.note { color: #566; font-size: 12px; max-width: 60em; }
"""


def _png(figure: Figure) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _kind(name: str) -> str:
    if name == "default":
        return "default"
    return "baseline" if name.startswith("baseline") else ""


def plots(evaluation: Evaluation) -> list[tuple[str, str]]:
    """``[(title, base64 PNG), ...]``; empty when nothing was retrieved (``--no-embed``)."""
    try:
        import matplotlib
    except ImportError as exc:
        raise MissingExtraError("evaluate --html (its plots)", "eval") from exc

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = evaluation.rows()
    names = [r["name"] for r in rows]
    out: list[tuple[str, str]] = []
    if "recall_mean" in rows[0]:
        fig, ax = plt.subplots(figsize=(8.5, 5.5))
        colors = {"heading": "#1f6feb", "semantic": "#8250df", "recursive": "#d97706"}
        seen: set[str] = set()
        for r in rows:
            kind = _kind(r["name"])
            strategy = r["strategy"]
            marker = {"default": "*", "baseline": "D"}.get(kind, "o")
            label = strategy if strategy not in seen else None
            seen.add(strategy)
            ax.scatter(
                r["iou_mean"],
                r["recall_mean"],
                s=160 if marker == "*" else 45,
                marker=marker,
                color=colors.get(strategy, "#6b7280"),
                label=label,
            )
            short = r["name"].replace(" overlap=0", "").replace("baseline: LangChain ", "")
            ax.annotate(short, (r["iou_mean"], r["recall_mean"]), fontsize=6.5,
                        xytext=(4, 3), textcoords="offset points")  # fmt: skip
        ax.legend(fontsize=8, title="★ default  ◆ baseline", title_fontsize=8)
        ax.set_xlabel("IoU, % (mean over questions)")
        ax.set_ylabel("recall, %")
        ax.set_title(f"recall vs IoU, k={evaluation.k}")
        ax.grid(alpha=0.3)
        out.append(("Recall against IoU", _png(fig)))
        plt.close(fig)

        metrics = [("recall", "recall"), ("precision", "precision"), ("iou", "IoU")]
        metrics.append(("precision_omega", "precision Ω"))
        fig, ax = plt.subplots(figsize=(max(7.5, 1.1 * len(rows) + 3), 4.5))
        width = 0.8 / len(rows)
        for i, r in enumerate(rows):
            xs = [j + i * width for j in range(len(metrics))]
            means = [r[f"{key}_mean"] for key, _ in metrics]
            stds = [r[f"{key}_std"] for key, _ in metrics]
            ax.bar(xs, means, width, yerr=stds, capsize=2, label=r["name"], alpha=0.85)
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(metrics))])
        ax.set_xticklabels([title for _, title in metrics])
        ax.set_ylabel("%, mean ± std")
        ax.legend(fontsize=7, ncol=2)
        ax.grid(axis="y", alpha=0.3)
        out.append(("Chroma's metrics", _png(fig)))
        plt.close(fig)

        per_question = [r.per_question["iou"] for r in evaluation.results]
        fig, ax = plt.subplots(figsize=(max(7.5, 0.9 * len(rows) + 3), 4))
        ax.boxplot([[100 * v for v in values] for values in per_question], showfliers=False)
        ax.set_xticks(range(1, len(names) + 1))
        ax.set_xticklabels(names, rotation=30, ha="right", fontsize=7)
        ax.set_ylabel("IoU per question, %")
        ax.grid(axis="y", alpha=0.3)
        out.append(("IoU per question", _png(fig)))
        plt.close(fig)
    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    ax.bar(range(len(rows)), [r["mean_tokens"] for r in rows], color="#8fb3e8")
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(names, rotation=30, ha="right", fontsize=7)
    ax.set_ylabel("mean chunk size, model tokens")
    ax.grid(axis="y", alpha=0.3)
    out.append(("Chunk sizes", _png(fig)))
    plt.close(fig)
    return out


def _table(evaluation: Evaluation) -> str:
    rows = evaluation.rows()
    shown = [(key, title) for key, title in COLUMNS if f"{key}_mean" in rows[0]]
    head = "".join(
        f"<th>{html.escape(t)}</th>"
        for t in ["configuration", "chunks", "mean tokens", "refs whole %"]
        + [title for _, title in shown]
    )
    body = []
    for r in rows:
        cells = [
            html.escape(r["name"]),
            str(r["chunks"]),
            f"{r['mean_tokens']:.1f}",
            f"{r['refs_whole']:.1f}",
        ]
        for key, _ in shown:
            mean, std = r[f"{key}_mean"], r[f"{key}_std"]
            cells.append(f"{mean:.0f}" if key == "context_tokens" else f"{mean:.1f} ± {std:.1f}")
        body.append(
            f'<tr class="{_kind(r["name"])}">' + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"
        )
    return f'<table id="results"><tr>{head}</tr>{"".join(body)}</table>'


def render_report(evaluation: Evaluation) -> str:
    """The evaluation as one self-contained HTML page (tables, plots inlined)."""
    images = "".join(
        f'<h2>{html.escape(title)}</h2><img alt="{html.escape(title)}" '
        f'src="data:image/png;base64,{data}">'
        for title, data in plots(evaluation)
    )
    meta = (
        f"model {html.escape(evaluation.model)} · k = {evaluation.k} · "
        f"{evaluation.search} search · "
        f"{evaluation.questions} questions · {evaluation.corpus_chars} characters · "
        f"{evaluation.embedded} texts embedded in {evaluation.embed_seconds:.0f} s · "
        f"{evaluation.seconds:.0f} s in all"
    )
    note = (
        '<p class="note">recall, precision, IoU and precision Ω as in Chroma\'s report '
        '"Evaluating Chunking Strategies for Retrieval" (character ranges; precision over the '
        "sum of the retrieved chunks' lengths; precision Ω with every chunk touching a "
        "reference). R@k: every reference wholly inside the retrieved chunks. MRR: first hit "
        "overlapping a reference. dup: hits overlapping or repeating a higher-ranked one. "
        "ctx_tok: model tokens of the top k. refs whole: references lying whole in one chunk."
        "</p>"
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>ragingest evaluate</title><style>{CSS}</style></head><body>"
        f'<h1>Retrieval evaluation</h1><div class="meta">{meta}</div>'
        f"{_table(evaluation)}{note}{images}</body></html>\n"
    )


def write_report(evaluation: Evaluation, path: str | Path) -> Path:
    """Write the HTML report to ``path`` (folders created); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_report(evaluation), encoding="utf-8")
    return path
