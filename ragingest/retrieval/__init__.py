"""Searching a stored collection: the public LangChain retriever ``HeadingFirstRetriever``
(``heading_first``; ``ragingest.retriever(...)`` builds one), ranked chunks, dense, lexical or
fused (``search``), metadata filters (``filters``), the search with parent expansion
(``retriever``), context within a token budget and auto-merging (``context``, ``passages``),
and the app's one-call ``search()`` (``query``). Above the store it reads (through the store
seam, ``vectorstore.seam``); the pipeline and the CLI sit above it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragingest.retrieval.heading_first import HeadingFirstRetriever
    from ragingest.vectorstore.access.principals import ALL, Principals

__all__ = ["ALL", "HeadingFirstRetriever", "Principals"]


def __getattr__(name: str) -> Any:
    """Imported on first use: the CLI's modules that need only ``filters`` do not pay for
    LangChain's retriever machinery."""
    if name == "HeadingFirstRetriever":
        from ragingest.retrieval.heading_first import HeadingFirstRetriever

        return HeadingFirstRetriever
    if name in ("ALL", "Principals"):
        from ragingest.vectorstore.access import principals as access

        return getattr(access, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The module's names with its lazy exports (``__all__``), not imported by listing them."""
    return sorted(set(globals()) | set(__all__))
