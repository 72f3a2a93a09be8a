"""LangChain ``Embeddings`` over the embedding model, with the model's own prompts.

The model runs on ONNX Runtime with int8 weights by default (``onnx_backend``; no torch or
sentence-transformers import), or as a sentence-transformers model on torch
(``backend="torch"`` or ``RAGINGEST_BACKEND=torch``).

A thin class of ours rather than ``HuggingFaceEmbeddings``: it shares the one loaded model with
the splitter's size checks, applies the model's ``query: ``/``passage: `` prompts, and counts
the texts it embeds (the run report and the re-index checks read that count).
"""

from __future__ import annotations

from langchain_core.embeddings import Embeddings

from ragingest.models.encoder import MAX_BATCH_TOKENS, ModelEncoder

__all__ = ["MAX_BATCH_TOKENS", "SentenceTransformerEmbeddings"]


class SentenceTransformerEmbeddings(ModelEncoder, Embeddings):
    """``ModelEncoder`` (``models.encoder``) as a LangChain ``Embeddings``."""
