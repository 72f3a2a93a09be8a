"""``langchain_chroma.Chroma``, the LangChain ``VectorStore`` that ``store.ChunkStore`` extends
(importing it costs LangChain's runnables and tracers: only the write and retriever paths do)."""

from __future__ import annotations

from langchain_chroma import Chroma

__all__ = ["Chroma"]
