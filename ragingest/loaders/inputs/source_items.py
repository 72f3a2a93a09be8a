"""What ingest was given, sorted: paths stay paths (the file walk handles them); a LangChain
``BaseLoader`` or an iterable of ``Document``s becomes a ``DocumentSource`` (``sources``).

Contract: ``split_sources(sources)`` keeps the order; a ``str``/``PathLike`` is a path, a
``BaseLoader`` a loader, a ``Document`` or an iterable of them given documents (adjacent
``Document`` items of ``sources`` form one source). Anything else raises ``TypeError`` naming
it and what is accepted. Two sources of one name are told apart (``name#2``);
``loader_name(loader)`` is a loader's name in the report.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from langchain_core.document_loaders import BaseLoader
from langchain_core.documents import Document

from ragingest.loaders.formats.partition import setup as setup_unstructured
from ragingest.loaders.inputs.sources import DocumentSource, is_unstructured

# What ingest reads: paths (files or folders), LangChain loaders, Documents and iterables of
# Documents, one of them or an iterable mixing them (module docstring).
Source = str | os.PathLike[str] | BaseLoader | Document | Iterable[Document]
Sources = Source | Iterable[Source]

_PATH_ATTRS = ("file_path", "path", "web_path", "url", "source")


def loader_name(loader: BaseLoader) -> str:
    """``Class(path)`` for a loader with a path-like attribute, else ``Class``."""
    cls = type(loader).__name__
    for attr in _PATH_ATTRS:
        value = getattr(loader, attr, None)
        if isinstance(value, str | os.PathLike) and str(value):
            return f"{cls}({value})"
    return cls


def split_sources(
    sources: Sources,
) -> tuple[list[Path], list[DocumentSource]]:
    """Paths and document sources of ``sources`` (module docstring)."""
    if isinstance(sources, str | os.PathLike | BaseLoader | Document):
        sources = [sources]
    paths: list[Path] = []
    found: list[DocumentSource] = []
    pending: list[Document] = []

    def flush() -> None:
        if pending:
            items = list(pending)
            found.append(DocumentSource("documents", lambda: items, given=True))
            pending.clear()

    for item in sources:
        if isinstance(item, Document):
            pending.append(item)
            continue
        flush()
        if isinstance(item, str | os.PathLike):
            paths.append(Path(item))
        elif isinstance(item, BaseLoader):
            if is_unstructured(item):
                setup_unstructured()  # its spaCy model offline, no telemetry
            ours = type(item).__module__.startswith("ragingest.")
            found.append(DocumentSource(loader_name(item), item.lazy_load, ours=ours))
        elif isinstance(item, Iterable) and not isinstance(item, bytes | dict):
            items = _materialize(item)
            found.append(DocumentSource("documents", items.copy, given=True))
        else:
            raise TypeError(
                f"cannot ingest {type(item).__name__} {item!r:.80}: give paths, LangChain "
                "document loaders (BaseLoader) or iterables of Documents"
            )
    flush()
    _unique_names(found)
    return paths, found


def _materialize(items: Iterable[Document]) -> list[Document]:
    return items if isinstance(items, list) else list(items)  # a generator is read once


def _unique_names(sources: list[DocumentSource]) -> None:
    seen: dict[str, int] = {}
    for source in sources:
        count = seen.get(source.name, 0)
        seen[source.name] = count + 1
        if count:
            source.name = f"{source.name}#{count + 1}"
