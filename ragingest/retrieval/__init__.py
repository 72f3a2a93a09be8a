"""Searching a stored collection: ranked chunks, dense, lexical or fused (``search``), metadata
filters (``filters``), the LangChain retriever with parent expansion (``retriever``), context
within a token budget and auto-merging (``context``, ``passages``), and the app's one-call
``search()`` (``query``). Above the store it reads; the pipeline and the CLI sit above it.
"""
