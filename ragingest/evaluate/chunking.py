"""Cutting the corpus for ``ragingest evaluate``: the splitter a configuration names, and the
chunks it gives, with exact offsets into each corpus file."""

from __future__ import annotations

from dataclasses import dataclass

from ragingest.defaults import CHUNK_SIZE, MIN_CHUNK_SIZE
from ragingest.evaluate.baselines import ChonkieBaseline, LlamaIndexBaseline, SemchunkBaseline
from ragingest.evaluate.configs import Config
from ragingest.models.resolve import load_model_info
from ragingest.splitters.base import ChunkSplitter
from ragingest.splitters.factory import SplitSettings, base_splitter
from ragingest.splitters.measure import capped_size
from ragingest.splitters.semantic import Embed


@dataclass(frozen=True)
class EvalChunk:
    """One chunk of an evaluation corpus file: its span, text, embedded text, size in tokens and
    parent span."""

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
    return capped_size(CHUNK_SIZE, "tokens", load_model_info(model).max_embed_tokens)


def build_splitter(
    config: Config, model: str | None, embedder: Embed | None = None
) -> ChunkSplitter:
    """The splitter for ``config``, sizes in ``model``'s tokens: the product's through its one
    factory, or a plain baseline."""
    info = load_model_info(model)
    if config.strategy in ("semchunk", "chonkie", "llamaindex"):
        size = capped_size(
            config.chunk_size or default_chunk_size(model), "tokens", info.max_embed_tokens
        )
        plain: dict[str, type[SemchunkBaseline | ChonkieBaseline | LlamaIndexBaseline]] = {
            "semchunk": SemchunkBaseline,
            "chonkie": ChonkieBaseline,
            "llamaindex": LlamaIndexBaseline,
        }
        baseline = plain[config.strategy]
        return baseline(size, info.tokenizer)
    settings = SplitSettings(
        chunk_size=config.chunk_size,
        chunk_overlap=config.chunk_overlap,
        min_chunk_size=(
            MIN_CHUNK_SIZE if config.min_chunk_size is None else config.min_chunk_size
        ),
        context_prefix=config.context_prefix,
        strategy=config.strategy,
        parent_chunk_size=config.parent_chunk_size,
    )
    return base_splitter(settings, info=info, model=model, embedder=embedder)


def split_corpus(splitter: ChunkSplitter, corpus: dict[str, str]) -> list[EvalChunk]:
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
