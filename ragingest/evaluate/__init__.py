"""Retrieval evaluation: Chroma's chunking metrics over a question set (``ragingest evaluate``)."""

from ragingest.evaluate.runner import (
    Config,
    EmbeddingCache,
    Evaluation,
    Question,
    evaluate,
    format_table,
    load_corpus,
    load_questions,
    parse_config,
    parse_sweep,
)

__all__ = [
    "Config",
    "EmbeddingCache",
    "Evaluation",
    "Question",
    "evaluate",
    "format_table",
    "load_corpus",
    "load_questions",
    "parse_config",
    "parse_sweep",
]
