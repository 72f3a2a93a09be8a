"""Cutting the corpus for ``ragingest evaluate``: the splitter a configuration names, and the
chunks it gives, with exact offsets into each corpus file."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragingest.evaluate.configs import Config


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


def default_chunk_size(model: str | None) -> int:
    """The chunk size the default configuration ends up with for ``model`` (after the cap)."""
    from ragingest.splitters.heading_first import DEFAULT_CHUNK_SIZE
    from ragingest.vectorstore.models import load_model_info

    return min(DEFAULT_CHUNK_SIZE, load_model_info(model).max_embed_tokens)


def build_splitter(config: Config, model: str | None, embedder: Any = None) -> Any:
    """The splitter for ``config`` (anything with ``split_chunks(text)``), sizes in
    ``model``'s tokens."""
    from ragingest.splitters import FixedSizeSplitter, HeadingFirstSplitter
    from ragingest.splitters.heading_first import DEFAULT_MIN_CHUNK_SIZE
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
    size = min(config.chunk_size or default_chunk_size(model), info.max_embed_tokens)
    overlap = config.chunk_overlap or 0
    if config.strategy == "semchunk":
        from ragingest.evaluate.baselines import SemchunkBaseline

        return SemchunkBaseline(size, info.tokenizer)
    if config.strategy == "chonkie":
        from ragingest.evaluate.baselines import ChonkieBaseline

        return ChonkieBaseline(size, info.tokenizer)
    if config.strategy == "recursive":
        return RecursiveBaseline(size, overlap, "tokens", info.tokenizer)
    return FixedSizeSplitter(size, overlap, "tokens", tokenizer=info.tokenizer)


def _sentence_embedder(model: str | None) -> Callable[[list[str]], np.ndarray]:
    from ragingest.vectorstore.embeddings import SentenceTransformerEmbeddings

    embeddings = SentenceTransformerEmbeddings(model)
    return lambda texts: np.asarray(embeddings.embed_documents(texts), dtype=np.float32)


def split_corpus(splitter: Any, corpus: dict[str, str]) -> list[EvalChunk]:
    """Every chunk of every file; raises if a chunk's text is not ``text[start:end]``."""
    chunks = []
    for corpus_id, text in corpus.items():
        for c in splitter.split_chunks(text):
            if text[c.start_index : c.end_index] != c.text:
                raise ValueError(f"{corpus_id}: chunk [{c.start_index}, {c.end_index}) is off")
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
