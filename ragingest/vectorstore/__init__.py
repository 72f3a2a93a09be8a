"""Vector store: models (offline), embeddings, and the Chroma collection."""

from ragingest.vectorstore.embeddings import SentenceTransformerEmbeddings
from ragingest.vectorstore.store import open_store

__all__ = ["SentenceTransformerEmbeddings", "open_store"]
