"""Splitting throughput: ``HeadingFirstSplitter`` (model tokens) against LangChain's
``RecursiveCharacterTextSplitter.from_huggingface_tokenizer`` with the same tokenizer and
chunk size, on the eval corpora and on them replicated ×10. Goal: ≥ 2× faster."""

from __future__ import annotations

from typing import Any

from bench.common import corpus_texts, median, timed


def run(quick: bool, repeat: int, say: Any = print) -> dict[str, Any]:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    from ragingest.models.resolve import load_model_info
    from ragingest.splitters import HeadingFirstSplitter

    info = load_model_info(None)
    ours = HeadingFirstSplitter(tokenizer=info.tokenizer, max_embed_tokens=info.max_embed_tokens)
    size, overlap = ours.chunk_size, ours.chunk_overlap
    theirs = RecursiveCharacterTextSplitter.from_huggingface_tokenizer(
        info.tokenizer, chunk_size=size, chunk_overlap=overlap
    )
    docs = corpus_texts()
    sets = [("corpora", docs)] + ([] if quick else [("corpora x10", docs * 10)])
    # what ingest does: the title goes into every chunk's breadcrumb, so it is counted too
    ours.split_chunks(docs[0][1][:5000], title=docs[0][0])  # warm up
    theirs.split_text(docs[0][1][:5000])
    results: dict[str, Any] = {"chunk_size": size, "chunk_overlap": overlap, "sets": {}}
    for name, texts in sets:
        chars = sum(len(t) for _, t in texts)
        times: dict[str, list[float]] = {"heading_first": [], "recursive": []}
        chunks: dict[str, int] = {}
        for _ in range(repeat):
            t, out = timed(lambda texts=texts: [ours.split_chunks(t, title=s) for s, t in texts])
            times["heading_first"].append(t)
            chunks["heading_first"] = sum(map(len, out))
            t, out = timed(lambda texts=texts: [theirs.split_text(t) for _s, t in texts])
            times["recursive"].append(t)
            chunks["recursive"] = sum(map(len, out))
        ratios = [r / h for h, r in zip(times["heading_first"], times["recursive"], strict=True)]
        row = {
            "chars": chars,
            "seconds": {k: [round(x, 3) for x in v] for k, v in times.items()},
            "median_seconds": {k: round(median(v), 3) for k, v in times.items()},
            "mb_per_s": {k: round(chars / 1e6 / median(v), 3) for k, v in times.items()},
            "chunks": chunks,
            "speedup": round(median(ratios), 2),
        }
        results["sets"][name] = row
        say(
            f"split {name}: heading-first {row['median_seconds']['heading_first']} s, "
            f"recursive {row['median_seconds']['recursive']} s → {row['speedup']}×"
        )
    return results
