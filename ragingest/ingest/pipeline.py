"""The local engine: walk → load → split → embed → Chroma, through LangChain's ``index()``.

Contract: ``ingest`` never stops on a bad file: the file is named in the report with the
reason and the others go in. Writes go through ``index()`` with a persistent
``SQLRecordManager`` beside the Chroma directory, so a re-run skips unchanged chunks, replaces
stale ones and deletes the chunks of files that vanished from the ingested roots.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.documents import Document
from langchain_core.indexing import index

from ragingest.errors import FileError, UnsupportedFormatError
from ragingest.ingest.report import FileResult, RunReport
from ragingest.loaders import loader_for, walk
from ragingest.loaders.base import MAX_FILE_BYTES
from ragingest.schema import breadcrumb_title, chunk_metadata
from ragingest.splitters import HeadingFirstSplitter
from ragingest.vectorstore.embeddings import SentenceTransformerEmbeddings
from ragingest.vectorstore.records import record_manager
from ragingest.vectorstore.store import EMBED_KEY, open_store

log = logging.getLogger(__name__)


@dataclass
class SplitSettings:
    """Everything that decides chunk boundaries; recorded in the collection."""

    chunk_size: int | None = None
    chunk_overlap: int | None = None
    min_chunk_size: int = 100
    unit: str = "tokens"
    context_prefix: bool = True
    split_levels: tuple[int, ...] = (2, 3)

    def splitter(self, embeddings: SentenceTransformerEmbeddings) -> HeadingFirstSplitter:
        return HeadingFirstSplitter(
            self.chunk_size,
            self.chunk_overlap,
            self.min_chunk_size,
            unit=self.unit,  # type: ignore[arg-type]
            tokenizer=embeddings.info.tokenizer,
            max_embed_tokens=embeddings.info.max_embed_tokens,
            split_levels=self.split_levels,
            context_prefix=self.context_prefix,
        )

    def recorded(self) -> dict[str, Any]:
        data = asdict(self)
        data["split_levels"] = list(self.split_levels)
        return data


@dataclass
class IngestOptions:
    persist_dir: Path
    collection: str
    model: str | None = None
    split: SplitSettings = field(default_factory=SplitSettings)
    include: Sequence[str] = ()
    exclude: Sequence[str] = ()
    max_file_bytes: int = MAX_FILE_BYTES
    batch_size: int = 64
    delete_missing: bool = True
    progress: bool = False


def split_file(
    path: Path,
    root: Path | None,
    splitter: HeadingFirstSplitter,
    max_file_bytes: int = MAX_FILE_BYTES,
) -> list[Document]:
    """Load one file and return its chunks as Documents (``EMBED_KEY`` holds the embedded
    text); raises a ``FileError`` naming the file."""
    documents: list[Document] = []
    loader = loader_for(path, root, max_file_bytes)
    try:
        for document in loader.lazy_load():
            chunks = splitter.split_chunks(
                document.page_content, title=breadcrumb_title(document.metadata)
            )
            for i, chunk in enumerate(chunks):
                metadata = chunk_metadata(document.metadata, chunk, i, len(chunks))
                metadata[EMBED_KEY] = chunk.embed_text
                documents.append(Document(page_content=chunk.text, metadata=metadata))
    except FileError:
        raise
    except Exception as exc:
        raise FileError(path, f"{type(exc).__name__}: {exc}") from exc
    return documents


def ingest(paths: Sequence[str | Path], options: IngestOptions) -> RunReport:
    started = time.perf_counter()
    report = RunReport()
    embeddings = SentenceTransformerEmbeddings(options.model, batch_size=options.batch_size)
    settings = options.split.recorded()
    store = open_store(options.persist_dir, options.collection, embeddings, settings=settings)
    splitter = options.split.splitter(embeddings)
    manager = record_manager(options.persist_dir, options.collection)
    files = list(walk(paths, options.include, options.exclude))
    seen_sources: set[str] = set()
    failed_sources: set[str] = set()

    def documents() -> Iterator[Document]:
        for found in _progress(files, options.progress):
            source = found.source
            try:
                chunks = split_file(found.path, found.root, splitter, options.max_file_bytes)
            except UnsupportedFormatError as exc:
                report.files.append(
                    FileResult(source, "unsupported", error=exc.reason, kind=exc.kind)
                )
                continue
            except FileError as exc:
                log.warning("%s", exc)
                failed_sources.add(source)
                report.files.append(FileResult(source, "failed", error=exc.reason, kind=exc.kind))
                continue
            seen_sources.add(source)
            report.files.append(FileResult(source, "ok", chunks=len(chunks)))
            yield from chunks

    result = index(
        documents(),
        manager,
        store,
        batch_size=256,
        cleanup="scoped_full",
        source_id_key="source",
        key_encoder="sha256",
    )
    report.added = result["num_added"]
    report.updated = result["num_updated"]
    report.skipped = result["num_skipped"]
    report.deleted = result["num_deleted"]
    if options.delete_missing:
        report.deleted += _delete_vanished(manager, store, seen_sources | failed_sources)
    report.embeddings_computed = embeddings.computed
    report.seconds = time.perf_counter() - started
    return report


def _delete_vanished(manager: Any, store: Any, keep: set[str]) -> int:
    """Delete the chunks of sources that are no longer under the ingested roots."""
    deleted = 0
    for group in [g for g in manager.list_groups() if g not in keep]:
        keys = manager.list_keys(group_ids=[group])
        if keys:
            store.delete(keys)
            manager.delete_keys(keys)
            deleted += len(keys)
    return deleted


def _progress(items: list, enabled: bool) -> Any:
    if not enabled:
        return items
    from tqdm import tqdm

    return tqdm(items, desc="ingest", unit="file", leave=False)
