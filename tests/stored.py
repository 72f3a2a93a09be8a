"""The store backends the pipeline's tests run over, and what a test reads back from one.

``store_backend`` (a fixture of ``tests/conftest.py``) runs a test once per built-in backend
(``vectorstore.backends.BUILT_IN``: Chroma on disk, the exact in-memory store); the test hands
the name to the public API (``ingest(..., backend=...)``, ``ragingest ingest --backend``,
``open_store(..., backend=...)``). ``stored_rows`` reads a collection back through the store
port, whichever backend holds it, without loading a model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragingest.vectorstore.backends import open_backend
from ragingest.vectorstore.records.aliases import resolve_collection
from ragingest.vectorstore.seam import parse_filter


def stored_rows(
    persist: str | Path,
    collection: str,
    backend: str,
    *,
    where: dict[str, Any] | None = None,
    vectors: bool = False,
) -> dict[str, tuple[Any, ...]]:
    """id → (text, metadata[, vector as a tuple]) of the chunks ``where`` admits in the
    physical collection serving ``collection``."""
    index = open_backend(persist, kind=backend).open(resolve_collection(persist, collection))
    chunks = index.get(where=parse_filter(where))
    rows: dict[str, tuple[Any, ...]] = {c.id: (c.text, c.metadata) for c in chunks}
    assert len(rows) == len(chunks)  # no duplicate ids
    if vectors:
        found = index.vectors(list(rows))
        rows = {i: (*row, tuple(float(x) for x in found[i])) for i, row in rows.items()}
    return rows


def stored_count(persist: str | Path, collection: str, backend: str) -> int:
    """The number of chunks in the physical collection serving ``collection``."""
    return open_backend(persist, kind=backend).open(resolve_collection(persist, collection)).count()
