"""The embedding model's encoder with its own prompts, without LangChain's ``Embeddings`` base
(whose import pulls LangChain's runnables and callbacks, ~0.15 s of a one-shot ``query``);
``embeddings.SentenceTransformerEmbeddings`` is this encoder as a LangChain ``Embeddings``.

The model runs on ONNX Runtime with int8 weights by default (``onnx_backend``; no torch or
sentence-transformers import), or as a sentence-transformers model on torch
(``backend="torch"`` or ``RAGINGEST_BACKEND=torch``).

On torch, texts are bucketed by token length (sorted within each call, vectors returned in
input order) so a batch pads little, and batches are cut by padded tokens as well as by count
(``max_batch_tokens``): activations grow with batch × length (attention with batch ×
length²), so 64 texts of 512 tokens in one forward pass would cost ~800 MB more peak memory
than 16, for no speed on a CPU. The ONNX encoder runs each text alone (no padding at all) and
schedules its texts itself, so it gets the whole call at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ragingest.defaults import EMBED_BATCH_SIZE
from ragingest.models.resolve import load_model_info, load_sentence_transformer

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

    from ragingest.models.onnx_backend import OnnxSentenceEncoder

MAX_BATCH_TOKENS = 8192  # padded tokens per forward pass: 16 texts of 512, 64 of 128


class ModelEncoder:
    """``embed_documents``/``embed_query``: unit vectors of texts, the model's document/query
    prompt applied; ``computed`` counts the texts embedded."""

    def __init__(
        self,
        model: str | None = None,
        batch_size: int = EMBED_BATCH_SIZE,
        show_progress: bool = False,
        backend: str | None = None,  # onnx | torch; default $RAGINGEST_BACKEND, else onnx
        max_batch_tokens: int = MAX_BATCH_TOKENS,
    ) -> None:
        self.info = load_model_info(model, backend)
        self.batch_size = batch_size
        self.max_batch_tokens = max_batch_tokens
        self.show_progress = show_progress
        self.computed = 0  # texts embedded by this instance

    @property
    def model(self) -> SentenceTransformer | OnnxSentenceEncoder:
        """The loaded sentence-transformers model (loaded once per name and backend)."""
        return load_sentence_transformer(self.info.name, self.info.backend)

    def _encode(self, texts: list[str], prompt: str) -> list[list[float]]:
        if not texts:
            return []
        rows: np.ndarray | None = None
        for batch in self._batches(texts, prompt):
            vectors = self.model.encode(
                [texts[i] for i in batch],
                prompt=prompt or None,
                batch_size=len(batch),
                normalize_embeddings=True,
                show_progress_bar=self.show_progress,
                convert_to_numpy=True,
            )
            if rows is None:
                rows = np.empty((len(texts), vectors.shape[1]), dtype=vectors.dtype)
            rows[batch] = vectors
        self.computed += len(texts)
        return rows.tolist()  # type: ignore[union-attr]

    def _batches(self, texts: list[str], prompt: str) -> list[list[int]]:
        """Indices of ``texts``, longest first, in batches of at most ``batch_size`` texts and
        ``max_batch_tokens`` padded tokens (a longer single text is a batch of its own); all of
        them in one batch, in order, for a model that runs each text alone (onnx)."""
        if len(texts) == 1 or self.info.backend == "onnx":
            return [list(range(len(texts)))]
        counted = self.info.backend_tokenizer.encode_batch_fast(
            [prompt + t for t in texts], add_special_tokens=True
        )
        lengths = [min(len(e.ids), self.info.max_seq_length) for e in counted]
        order = sorted(range(len(texts)), key=lambda i: -lengths[i])
        batches: list[list[int]] = []
        for i in order:
            batch = batches[-1] if batches else None
            if (
                batch is None
                or len(batch) >= self.batch_size
                or (len(batch) + 1) * lengths[batch[0]] > self.max_batch_tokens
            ):
                batches.append([i])
            else:
                batch.append(i)
        return batches

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, embedded with the model's document prompt."""
        return self._encode(list(texts), self.info.document_prompt)

    def embed_query(self, text: str) -> list[float]:
        """The vector of ``text``, embedded with the model's query prompt."""
        return self._encode([text], self.info.query_prompt)[0]
