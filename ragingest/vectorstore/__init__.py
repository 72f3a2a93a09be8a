"""What is stored and where: a collection (``collection.Collection``: a ``port.DenseIndex`` with
the side stores beside it, opened by ``opening.open_store`` / ``open_reader`` from a
``port.Backend`` of ``backends``; Chroma's in ``chroma/``), the records database
(``records/``), the lexical index (``lexical/``), the access filter (``access/``) and the
embedding cache. The models it embeds with are in ``ragingest.models``; searching it is
``ragingest.retrieval``."""

from __future__ import annotations

from typing import Any

__all__ = ["Collection", "open_reader", "open_store"]


def __getattr__(name: str) -> Any:
    """Imported on first use: ``ragingest --help`` and the modules that need only ``server``
    do not pay for the store and LangChain."""
    if name in ("open_store", "open_reader"):
        from ragingest.vectorstore import opening

        return getattr(opening, name)
    if name == "Collection":
        from ragingest.vectorstore.collection import Collection

        return Collection
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The module's names with its lazy exports (``__all__``), not imported by listing them."""
    return sorted(set(globals()) | set(__all__))
