"""ragingest: documents → heading-first chunks → sentence-transformers → Chroma."""

__version__ = "0.1.0"
