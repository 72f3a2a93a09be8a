"""LangChain ``Embeddings`` over a sentence-transformers model with the model's own prompts.

A thin class of ours rather than ``HuggingFaceEmbeddings``: it shares the one loaded model with
the splitter's size checks, applies the model's ``query: ``/``passage: `` prompts, and counts
the texts it embeds (the run report and the re-index checks read that count).
"""

from __future__ import annotations

from langchain_core.embeddings import Embeddings

from ragingest.vectorstore.models import load_model_info, load_sentence_transformer


class SentenceTransformerEmbeddings(Embeddings):
    def __init__(
        self, model: str | None = None, batch_size: int = 32, show_progress: bool = False
    ) -> None:
        self.info = load_model_info(model)
        self.batch_size = batch_size
        self.show_progress = show_progress
        self.computed = 0  # texts embedded by this instance

    @property
    def model(self):
        return load_sentence_transformer(self.info.name)

    def _encode(self, texts: list[str], prompt: str) -> list[list[float]]:
        if not texts:
            return []
        vectors = self.model.encode(
            texts,
            prompt=prompt or None,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            show_progress_bar=self.show_progress,
            convert_to_numpy=True,
        )
        self.computed += len(texts)
        return vectors.tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._encode(list(texts), self.info.document_prompt)

    def embed_query(self, text: str) -> list[float]:
        return self._encode([text], self.info.query_prompt)[0]
