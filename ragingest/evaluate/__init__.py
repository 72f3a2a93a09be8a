"""Retrieval evaluation: Chroma's chunking metrics over a question set (``ragingest evaluate``)."""

from ragingest.evaluate.cache import EmbeddingCache
from ragingest.evaluate.configs import Config, parse_config, parse_sweep
from ragingest.evaluate.data import Question, load_corpus, load_questions
from ragingest.evaluate.results import Evaluation, format_table
from ragingest.evaluate.runner import evaluate

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
