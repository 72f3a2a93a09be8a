"""What is stored and where: the Chroma collection (``store``, ``reader``), the records database
(``records``, ``record_manager``, ``aliases``, ``names``), the lexical index, parent sections
and the embedding cache. The models it embeds with are in ``ragingest.models``; searching it is
``ragingest.retrieval``."""

from __future__ import annotations

from typing import Any

__all__ = ["open_store"]


def __getattr__(name: str) -> Any:
    """Imported on first use: ``ragingest --help`` and the modules that need only ``server``
    do not pay for Chroma and LangChain."""
    if name == "open_store":
        from ragingest.vectorstore.chroma.store import open_store

        return open_store
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The module's names with its lazy exports (``__all__``), not imported by listing them."""
    return sorted(set(globals()) | set(__all__))
