"""``ragingest evaluate --search hybrid``: BM25 over a temp lexical index fused with the dense
ranking as the retriever fuses them (distribution-based score fusion; reciprocal rank fusion
with ``fusion="rrf"``), the same for every configuration.

The unit tests use hand-made vectors (a fake embedding, named as such) so that the dense order
is known exactly and the fused order can be computed by hand; real Chroma, real FTS5 index.
The exact metric values come from ``evaluate`` over a hashed-word test double
(``tests.fake_embeddings``); the command test uses the real model and asserts only what BM25
decides, whatever the model's near-tied scores of the four codes are on this machine."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from ragingest.cli.main import main
from ragingest.evaluate import load_corpus, load_questions
from ragingest.evaluate.chunking import EvalChunk
from ragingest.evaluate.configs import Config
from ragingest.evaluate.retrieval import retrieve
from ragingest.evaluate.runner import evaluate
from tests.fake_embeddings import FakeEmbeddingCache, HashedWordEmbeddings

MINILM = "sentence-transformers/all-MiniLM-L6-v2"

TEXTS = [
    "Clean the filter every month.",  # 0
    "The pump runs quietly at night.",  # 1
    "Close the lid before washing.",  # 2
    "Error E-07 means the drain hose is blocked.",  # 3
]
# fake embedding: cosine to the query [1, 0] is 1.0, 0.8, 0.6, 0.0 -> dense order 0, 1, 2, 3
FAKE_VECTORS = np.array([[1.0, 0.0], [0.8, 0.6], [0.6, 0.8], [0.0, 1.0]], dtype=np.float32)
FAKE_QUERY = np.array([[1.0, 0.0]], dtype=np.float32)
QUERY = "What does E-07 mean?"  # terms e, 07, e_07 (and what, doe, mean) occur in chunk 3 only


def chunks() -> list[EvalChunk]:
    out, start = [], 0
    for text in TEXTS:
        out.append(EvalChunk("manual", start, start + len(text), text, text, 8, start, 0))
        start += len(text) + 2
    return out


def test_dense_ranking_is_the_cosine_order():
    assert retrieve(chunks(), FAKE_VECTORS, FAKE_QUERY, 4) == [[0, 1, 2, 3]]


def test_hybrid_fuses_bm25_by_reciprocal_rank():
    def fused(k: int, query: str) -> list[list[int]]:
        return retrieve(chunks(), FAKE_VECTORS, FAKE_QUERY, k, [query], fusion="rrf")

    # dense [0, 1, 2, 3], BM25 [3]: 3 scores 1/64 + 1/61, above 0's 1/61, 1's 1/62, 2's 1/63
    assert fused(4, QUERY) == [[3, 0, 1, 2]]
    # two deep: dense [0, 1], BM25 [3]: 0 and 3 both score 1/61; the tie goes to the better
    # dense rank (0), then 1 (1/62); three hits from two lists of two
    assert fused(2, QUERY) == [[0, 3, 1]]
    # a query with no indexed term leaves the dense order
    assert fused(4, "zzz") == [[0, 1, 2, 3]]


def test_hybrid_fuses_scaled_scores_by_default():
    # two deep: dense [0, 1] scales to 5/8 and 3/8; BM25 [3] alone is a flat list: 1. Halves:
    # 3 scores 1/2, 0 5/16, 1 3/16 (RRF put 0 first: its rank ties 3's)
    assert retrieve(chunks(), FAKE_VECTORS, FAKE_QUERY, 2, [QUERY]) == [[3, 0, 1]]
    # four deep: cosines 1.0, 0.8, 0.6, 0.0 (mean 0.6, sd 0.374) scale to .634, .567, .5, .300;
    # 3 gets (0.300 + 1) / 2 = .650, above 0's .317, 1's .283 and 2's .25
    assert retrieve(chunks(), FAKE_VECTORS, FAKE_QUERY, 4, [QUERY]) == [[3, 0, 1, 2]]
    assert retrieve(chunks(), FAKE_VECTORS, FAKE_QUERY, 4, ["zzz"]) == [[0, 1, 2, 3]]


# -- the command, real model ---------------------------------------------------------------
# With --min-chunk-size 0 each section is one chunk. MiniLM is asked for codes it tells apart
# badly; the only query term in the index is the code, and only the code's own chunk has it.
CODES = [
    ("4471", "the drain hose is blocked"),
    ("4472", "the door is open"),
    ("4473", "the water is too cold"),
    ("4474", "the filter needs cleaning"),
]
SECTIONS = [f"## Code {code}\nCode {code}: {what}.\n" for code, what in CODES]
DOC = "\n".join(SECTIONS)


@pytest.fixture(scope="module")
def code_files(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("codes")
    corpus = root / "corpora"
    corpus.mkdir()
    (corpus / "manual.md").write_text(DOC, encoding="utf-8")
    questions = root / "questions.csv"
    with questions.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["question", "references", "corpus_id"])
        for section in SECTIONS:
            code = section.split()[2]
            body = section.split("\n")[1]
            start = DOC.index(body)
            ref = {"content": body, "start_index": start, "end_index": start + len(body)}
            writer.writerow([f"What does {code} mean?", json.dumps([ref]), "manual"])
    return corpus, questions


def run(capsys, files: tuple[Path, Path], *args: str) -> dict:
    argv = ["evaluate", "--corpus", str(files[0]), "--questions", str(files[1])]
    argv += ["--model", MINILM, "--json", "--quiet", "-k", "1", "--config", "heading:min=0"]
    assert main([*argv, *args]) == 0
    result = json.loads(capsys.readouterr().out)
    return result | {"row": next(r for r in result["results"] if r["name"] == "heading min=0")}


@pytest.mark.slow
@pytest.mark.model
def test_command_search_option_applies_to_every_configuration(capsys, code_files):
    hybrid = run(capsys, code_files)  # hybrid is the default, as in ragingest.retriever
    dense = run(capsys, code_files, "--search", "dense")
    assert (hybrid["search"], dense["search"]) == ("hybrid", "dense")
    assert [r["name"] for r in hybrid["results"]] == [r["name"] for r in dense["results"]]
    # BM25 finds only the asked code's chunk: it scores 1/61 + 1/(60 + its dense rank), every
    # other chunk at most 1/61 (dense alone), whatever the dense order
    assert hybrid["row"]["recall_at_k_mean"] == 100.0
    assert hybrid["row"]["mrr_mean"] == 100.0
    # dense alone: MiniLM's near-tied scores of the codes decide (1 or 2 of 4 on the CPUs
    # tried), so only that it is dense's own value: at most hybrid's, one of 0, 25, ... 100
    assert dense["row"]["recall_at_k_mean"] in (0.0, 25.0, 50.0, 75.0)


def test_search_option_over_deterministic_vectors_gives_exact_values(code_files):
    """The same corpus and questions through ``evaluate`` (what the command runs) over a test
    double that reads only letters: the codes are invisible to it, every chunk ties at cosine
    0 for every question and the tie goes to the first chunk; BM25 sees the codes."""
    corpus = load_corpus(code_files[0])
    questions = load_questions(code_files[1], corpus)
    letters_only = HashedWordEmbeddings(pattern=r"[^\W\d_]+")
    config = [Config("heading", min_chunk_size=0)]

    def row(search: str) -> dict:
        cache = FakeEmbeddingCache(letters_only)
        found = evaluate(corpus, questions, config, MINILM, k=1, cache=cache, search=search)
        return found.results[0].row()

    dense, hybrid = row("dense"), row("hybrid")
    assert (dense["recall_at_k_mean"], dense["mrr_mean"]) == (25.0, 25.0)  # code 4471 only
    assert (hybrid["recall_at_k_mean"], hybrid["mrr_mean"]) == (100.0, 100.0)


def test_evaluate_rejects_an_unknown_search(code_files):
    corpus = load_corpus(code_files[0])
    questions = load_questions(code_files[1], corpus)
    with pytest.raises(ValueError, match="search must be one of hybrid, dense, not 'bm25'"):
        evaluate(corpus, questions, [Config()], MINILM, search="bm25")
