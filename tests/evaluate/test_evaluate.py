"""``ragingest evaluate`` end to end on a generated corpus: real model, real Chroma, values
computed by hand where every chunk is retrieved (no order decides them), exact top-1 values over
deterministic test vectors; the HTML report opened in headless Chromium."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from ragingest.cli.main import main
from ragingest.evaluate import load_corpus, load_questions, parse_config, parse_sweep
from ragingest.evaluate.runner import Config, evaluate
from tests.browser import assert_rendered, screenshot
from tests.fake_embeddings import FakeEmbeddingCache, HashedWordEmbeddings

MINILM = "sentence-transformers/all-MiniLM-L6-v2"

# With --min-chunk-size 0 every section is one chunk (trimmed):
#   a.md: [0, 39) "## Cats\nCats sleep…"  and [41, 82) "## Trains\nThe night train…"
#   b.md: [0, 42) "## Bread\nBake the bread…"              — 122 characters in all
A = "## Cats\nCats sleep sixteen hours a day.\n\n## Trains\nThe night train leaves at nine.\n"
B = "## Bread\nBake the bread for forty minutes.\n"
QUESTIONS = [
    # question, corpus, references
    ("How long do cats sleep?", "a", [(8, 39)]),  # 31 characters
    ("When does the night train leave?", "a", [(51, 82), (19, 32)]),  # 31 + 13
    ("How long should the bread bake?", "b", [(9, 42)]),  # 33
]


@pytest.fixture(scope="module")
def eval_files(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("eval")
    corpus = root / "corpora"
    corpus.mkdir()
    (corpus / "a.md").write_text(A, encoding="utf-8")
    (corpus / "b.md").write_text(B, encoding="utf-8")
    texts = {"a": A, "b": B}
    questions = root / "questions.csv"
    with questions.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["question", "references", "corpus_id"])
        for text, corpus_id, spans in QUESTIONS:
            refs = [
                {"content": texts[corpus_id][s:e], "start_index": s, "end_index": e}
                for s, e in spans
            ]
            writer.writerow([text, json.dumps(refs), corpus_id])
    return corpus, questions


def run_evaluate(capsys, corpus: Path, questions: Path, *args: str) -> dict:
    argv = ["evaluate", "--corpus", str(corpus), "--questions", str(questions)]
    assert main([*argv, "--model", MINILM, "--json", "--quiet", *args]) == 0
    return json.loads(capsys.readouterr().out)


def row(result: dict, name: str) -> dict:
    return next(r for r in result["results"] if r["name"] == name)


def test_questions_load_from_csv_and_jsonl(eval_files, tmp_path):
    corpus, questions = eval_files
    texts = load_corpus(corpus)
    loaded = load_questions(questions, texts)
    assert [(q.corpus_id, [(r.start, r.end) for r in q.references]) for q in loaded] == [
        (c, spans) for _, c, spans in QUESTIONS
    ]
    jsonl = tmp_path / "q.jsonl"
    lines = []
    for q, c, spans in QUESTIONS:
        refs = [{"start_index": s, "end_index": e} for s, e in spans]
        lines.append(json.dumps({"question": q, "corpus_id": c, "references": refs}))
    jsonl.write_text("\n".join(lines), encoding="utf-8")
    assert load_questions(jsonl, texts) == loaded
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        json.dumps(
            {
                "question": "x",
                "corpus_id": "a",
                "references": [{"content": "nope", "start_index": 0, "end_index": 4}],
            }
        ),
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match="does not match"):
        load_questions(bad, texts)


@pytest.mark.slow
def test_every_chunk_retrieved_gives_the_hand_computed_values(capsys, eval_files):
    corpus, questions = eval_files
    result = run_evaluate(capsys, corpus, questions, "-k", "3", "--config", "heading:min=0")
    r = row(result, "heading min=0")
    assert (r["chunks"], r["mean_chars"]) == (3, round(122 / 3, 1))
    # k = 3 = every chunk: all references covered; precision over 122 retrieved characters
    assert (r["recall_mean"], r["recall_std"], r["recall_at_k_mean"]) == (100.0, 0.0, 100.0)
    precision = [31 / 122, 44 / 122, 33 / 122]
    mean = sum(precision) / 3
    std = (sum((p - mean) ** 2 for p in precision) / 3) ** 0.5
    assert r["precision_mean"] == round(100 * mean, 2)
    assert r["precision_std"] == round(100 * std, 2)
    assert r["iou_mean"] == round(100 * mean, 2)  # nothing left uncovered: IoU = precision
    # precision_omega: only the chunks touching a reference, 39, 39 + 41 and 42 characters
    omega = [31 / 39, 44 / 80, 33 / 42]
    assert r["precision_omega_mean"] == round(100 * sum(omega) / 3, 2)
    assert r["duplicate_rate_mean"] == 0.0
    assert r["refs_whole"] == 100.0


def test_top_one_gives_the_hand_computed_values(eval_files):
    """Over hashed-word test vectors (``tests.fake_embeddings``), so the order is the same on
    every machine: each question shares words with its own section only (and "the")."""
    corpus_dir, questions_file = eval_files
    corpus = load_corpus(corpus_dir)
    questions = load_questions(questions_file, corpus)
    cache = FakeEmbeddingCache(HashedWordEmbeddings())
    found = evaluate(corpus, questions, [parse_config("heading:min=0")], MINILM, k=1, cache=cache)
    r = next(x for x in found.rows() if x["name"] == "heading min=0")
    # each question's own section comes first; the train question misses "sixteen hours"
    recall = [1, 31 / 44, 1]
    iou = [31 / 39, 31 / (41 + 13), 33 / 42]
    precision = [31 / 39, 31 / 41, 33 / 42]
    assert r["recall_mean"] == round(100 * sum(recall) / 3, 2)
    assert r["iou_mean"] == round(100 * sum(iou) / 3, 2)
    assert r["precision_mean"] == round(100 * sum(precision) / 3, 2)
    assert r["mrr_mean"] == 100.0
    assert r["recall_at_k_mean"] == round(100 * 2 / 3, 2)


@pytest.mark.slow
def test_no_embed_gives_precision_omega_only(capsys, eval_files):
    corpus, questions = eval_files
    result = run_evaluate(capsys, corpus, questions, "--no-embed", "--config", "heading:min=0")
    r = row(result, "heading min=0")
    assert r["precision_omega_mean"] == round(100 * (31 / 39 + 44 / 80 + 33 / 42) / 3, 2)
    assert "recall_mean" not in r
    assert result["embedded"] == 0
    names = [x["name"] for x in result["results"]]
    assert names[0] == "default" and names[1].startswith("baseline: LangChain recursive")


def test_sweep_and_config_parsing():
    grid = parse_sweep(["strategy=heading,recursive", "size=64,128", "min=0,50", "prefix=on"])
    # recursive ignores min: 2 x 2 heading rows + 2 recursive rows
    assert len(grid) == 6
    assert Config("recursive", 64) in grid
    assert parse_config("heading:size=128,overlap=0,min=32,prefix=off") == Config(
        "heading", 128, 0, 32, False
    )
    assert parse_config("heading:retrieval=parents,parent=256").retrieval == "parents"
    for bad in (["size=x"], ["colour=red"], ["strategy=magic"], ["retrieval=all"]):
        with pytest.raises(ValueError):
            parse_sweep(bad)


@pytest.mark.slow
def test_report_html_renders_in_chromium(capsys, eval_files, tmp_path):
    corpus, questions = eval_files
    report = tmp_path / "report.html"
    result = run_evaluate(
        capsys,
        corpus,
        questions,
        "-k",
        "2",
        "--sweep",
        "size=32,64",
        "overlap=0",
        "min=0",
        "--html",
        str(report),
    )
    names = [r["name"] for r in result["results"]]
    assert names[0] == "default" and names[1].startswith("baseline: LangChain recursive")
    assert {"heading size=32 overlap=0 min=0", "heading size=64 overlap=0 min=0"} <= set(names)
    page = report.read_text(encoding="utf-8")
    assert page.count("data:image/png;base64,") == 4 and 'id="results"' in page
    png = screenshot(report, tmp_path / "report.png")
    assert_rendered(png)
