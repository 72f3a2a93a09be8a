"""Embedding backend: torch against ONNX Runtime int8 (the default since this measurement).

Both embed the same heading-first chunks of the eval corpora (``--quick``: the two smallest);
speed is timed on three interleaved thirds of the chunks (median of the three torch ÷ onnx
ratios). Retrieval quality: every question of ``questions_df.csv`` for those corpora takes its
top 5 chunks by exact cosine search, scored like Chroma's report — ``recall`` (share of the
reference characters inside the retrieved chunks, mean over questions) and ``recall@5`` (all of
a question's references whole inside retrieved chunks). Adopt onnx as the default only if
recall drops by ≤ 1 point.
"""

from __future__ import annotations

import csv
import json
from typing import Any

import numpy as np

from bench.common import EVAL, corpus_texts, timed

QUICK_CORPORA = ("chatlogs", "state_of_the_union")
K = 5


def _questions(corpora: set[str]) -> list[tuple[str, str, list[tuple[int, int]]]]:
    out = []
    with (EVAL / "questions_df.csv").open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if row["corpus_id"] in corpora:
                refs = [(r["start_index"], r["end_index"]) for r in json.loads(row["references"])]
                out.append((row["question"], row["corpus_id"], [(int(a), int(b)) for a, b in refs]))
    return out


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def scores(
    questions: list[tuple[str, str, list[tuple[int, int]]]],
    chunks: list[tuple[str, int, int]],
    top: np.ndarray,
) -> dict[str, float]:
    recall, recall_at_k = [], []
    for (_text, corpus, refs), ids in zip(questions, top, strict=True):
        spans = _merge([(chunks[i][1], chunks[i][2]) for i in ids if chunks[i][0] == corpus])
        total = sum(b - a for a, b in _merge(refs))
        covered = 0
        for a, b in _merge(refs):
            covered += sum(max(0, min(b, e) - max(a, s)) for s, e in spans)
        recall.append(covered / total if total else 0.0)
        recall_at_k.append(all(any(s <= a and b <= e for s, e in spans) for a, b in refs))
    return {
        "recall": round(100 * float(np.mean(recall)), 2),
        "recall_at_5": round(100 * float(np.mean(recall_at_k)), 2),
    }


def split_corpus(
    docs: list[tuple[str, str]], splitter: Any
) -> tuple[list[tuple[str, int, int]], list[str]]:
    """Each document's chunks as ``(stem, start, end)`` and, in the same order, the text each
    chunk embeds."""
    chunks, texts = [], []
    for stem, text in docs:
        for chunk in splitter.split_chunks(text, title=stem):
            chunks.append((stem, chunk.start_index, chunk.end_index))
            texts.append(chunk.embed_text)
    return chunks, texts


def run(quick: bool, say: Any = print) -> dict[str, Any]:
    from ragingest.models.resolve import load_model_info, load_sentence_transformer
    from ragingest.splitters import HeadingFirstSplitter

    docs = corpus_texts(QUICK_CORPORA if quick else None)
    info = load_model_info(None, "torch")
    splitter = HeadingFirstSplitter(
        tokenizer=info.tokenizer, max_embed_tokens=info.max_embed_tokens
    )
    chunks, texts = split_corpus(docs, splitter)
    questions = _questions({stem for stem, _ in docs})
    say(f"backend: {len(texts)} chunks, {len(questions)} questions")

    models = {}
    for backend in ("torch", "onnx"):
        t, models[backend] = timed(lambda backend=backend: load_sentence_transformer(None, backend))
        models[backend].encode(["warm up"], batch_size=1)
        say(f"  {backend} loaded in {t:.1f} s (the first onnx load exports the model)")
    prompt = info.document_prompt or None
    thirds = [texts[i::3] for i in range(3)]
    vectors: dict[str, list[np.ndarray]] = {"torch": [], "onnx": []}
    seconds: dict[str, list[float]] = {"torch": [], "onnx": []}
    for part in thirds:
        for backend, model in models.items():
            t, rows = timed(
                lambda model=model, part=part: model.encode(
                    part, prompt=prompt, batch_size=64, normalize_embeddings=True
                )
            )
            vectors[backend].append(np.asarray(rows, dtype=np.float32))
            seconds[backend].append(t)
    order = [i for k in range(3) for i in range(k, len(texts), 3)]
    ratios = [t / o for t, o in zip(seconds["torch"], seconds["onnx"], strict=True)]
    result: dict[str, Any] = {
        "chunks": len(texts),
        "questions": len(questions),
        "seconds": {k: [round(x, 1) for x in v] for k, v in seconds.items()},
        "speedup": round(float(np.median(ratios)), 2),
    }
    for backend, model in models.items():
        rows = np.empty((len(texts), vectors[backend][0].shape[1]), dtype=np.float32)
        rows[order] = np.concatenate(vectors[backend])
        queries = model.encode(
            [q[0] for q in questions],
            prompt=info.query_prompt or None,
            batch_size=64,
            normalize_embeddings=True,
        )
        top = np.argsort(-(np.asarray(queries) @ rows.T), axis=1)[:, :K]
        result[backend] = scores(questions, chunks, top)
        vectors[backend] = [rows]
    cosine = np.sum(vectors["torch"][0] * vectors["onnx"][0], axis=1)
    result["passage_cosine_mean"] = round(float(cosine.mean()), 4)
    result["passage_cosine_min"] = round(float(cosine.min()), 4)
    result["recall_delta"] = round(result["onnx"]["recall"] - result["torch"]["recall"], 2)
    result["recall_at_5_delta"] = round(
        result["onnx"]["recall_at_5"] - result["torch"]["recall_at_5"], 2
    )
    result["adopt_as_default"] = result["recall_delta"] >= -1.0
    say(
        f"backend: onnx int8 {result['speedup']}× torch; recall {result['torch']['recall']} → "
        f"{result['onnx']['recall']} ({result['recall_delta']:+} points), recall@5 "
        f"{result['torch']['recall_at_5']} → {result['onnx']['recall_at_5']}"
    )
    return result
