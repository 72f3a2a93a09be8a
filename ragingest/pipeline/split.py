"""The split stage: a ``FileTask`` → that source's ``ChunkRecord``s, every document of it (mbox
messages, CSV rows, pages), each cut by the splitter of its content type.

``records_of`` is the single place where a loaded document becomes records. ``split_task`` is
what both engines and ``inspect`` call; a failure raises a ``FileError`` naming the file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import cast

from langchain_core.documents import Document

from ragingest.defaults import MAX_CHUNKS_PER_FILE
from ragingest.errors import FileError, FileTimeoutError, TooManyChunksError
from ragingest.loaders import FoundFile
from ragingest.loaders.base import MAX_FILE_BYTES
from ragingest.loaders.cleaning.corpus import CorpusCleaner, apply_corpus
from ragingest.loaders.cleaning.rules import CleaningRules, Removal, new_counts
from ragingest.loaders.markdown.source_offsets import indexed_text, to_source
from ragingest.loaders.notes import add_note, file_notes
from ragingest.loaders.process.bounded import ParserPool
from ragingest.loaders.scans.text_quality import looks_garbled, real_word_share
from ragingest.pipeline.access_policy import page_access, section_readers
from ragingest.pipeline.plan import FileTask
from ragingest.schema import (
    ACCESS_KEY,
    PAGE_MAP_HINT,
    ChunkRecord,
    bound_extras,
    storable_keys,
    storable_problems,
)
from ragingest.splitters import deadline
from ragingest.splitters.base import ChunkSplitter
from ragingest.splitters.chunk_metadata import breadcrumb_title, chunk_metadata
from ragingest.splitters.content_types import ContentTypeConfig, config_for_root, detect
from ragingest.splitters.factory import SplitSettings, build_splitter

TEXT_LAYER_TYPES = ("pdf",)  # formats whose text is a layer that may not match the page
GARBLED_NOTE = (
    "the text layer reads as garbage (a font without a Unicode map, or a wrong code page); "
    "indexed as it is: its pages need OCR"
)


class FileChunks(list[ChunkRecord]):
    """The records of one task, in order, with what cleaning removed from it (``cleaning``:
    counts; ``removed``: each removal, the loader's and the run's, with its rule and span) and
    the files it is a copy of (``copies``)."""

    def __init__(self, *args: Iterable[ChunkRecord]) -> None:
        super().__init__(*args)
        self.cleaning: dict[str, int] = new_counts()
        self.removed: list[Removal] = []
        self.copies: list[str] = []
        self.notes: list[str] = []  # what the loader changed or lost (``loaders.notes``)
        self.lost = False  # part of the file did not come through: partly failed


@dataclass
class Splitting:
    """How a run splits: its settings, their base splitter (``factory.base_splitter``, built
    on first use by ``make_base``: it needs the model's tokenizer) and the file options."""

    settings: SplitSettings
    make_base: Callable[[], ChunkSplitter]
    max_file_bytes: int = MAX_FILE_BYTES
    cleaning: CleaningRules | None = None
    content_types: ContentTypeConfig | None = None  # None: .ragingest.toml in the task's root
    parsers: ParserPool | None = None  # files parse in its worker, time-bounded; None: here
    max_chunks: int | None = MAX_CHUNKS_PER_FILE  # per file; None: no bound
    split_timeout: float | None = None  # seconds per file; None: the parsers' (--file-timeout)

    @property
    def split_seconds(self) -> float | None:
        """The time bound on splitting one file: ``split_timeout``, else the parser pool's."""
        if self.split_timeout is not None:
            return self.split_timeout or None
        return self.parsers.timeout if self.parsers is not None else None

    @cached_property
    def base(self) -> ChunkSplitter:
        """The base splitter, built on first use."""
        return self.make_base()


def records_of(
    document: Document,
    source: str,
    splitting: Splitting,
    config: ContentTypeConfig | None,
    config_source: str | None = None,
    access: tuple[str, ...] | None = None,
) -> list[ChunkRecord]:
    """One loaded document → its records: content type, splitter, chunk metadata.
    ``config_source``: the path the content-type globs match (default: the source);
    ``access``: the readers every chunk carries (None: no access policy, no ``access`` key)."""
    text = document.page_content
    meta, renamed = storable_keys(document.metadata)  # one refused key must not stop the run
    meta.pop(ACCESS_KEY, None)  # the run's policy says who reads (``pipeline.access_sync``)
    if access is not None:
        meta[ACCESS_KEY] = list(access)
    pages = page_access([meta], source) if access is None else None  # pages' own readers
    meta, left_out = bound_extras(meta)
    for note in (renamed, left_out):
        if note:
            add_note(document.metadata, note)
    if meta.get("file_type") in TEXT_LAYER_TYPES and looks_garbled(text):
        share = real_word_share(text)
        add_note(document.metadata, f"{GARBLED_NOTE} ({share:.0%} of its text reads as words)")
    content_type = detect(text, meta, config, config_source)
    splitter = build_splitter(splitting.settings, content_type, base=splitting.base)
    chunks = splitter.split_chunks(text, title=breadcrumb_title(meta))
    meta, chunks = to_source(meta, chunks)  # text formats: offsets into the file as decoded
    indexed = indexed_text(text, meta)
    records = []
    for i, chunk in enumerate(chunks):
        metadata = chunk_metadata(meta, chunk, i, len(chunks))
        metadata["content_type"] = content_type
        if pages is not None:  # those of every page its section (returned for it) covers
            page_map = cast("list[tuple[int, int]] | None", meta.get(PAGE_MAP_HINT))
            metadata[ACCESS_KEY] = list(section_readers(pages, page_map, chunk.parent_span))
        problems = storable_problems(metadata)
        if problems:  # checked before anything is written: Chroma would keep the damage
            raise FileError(source, f"chunk {i}: metadata Chroma cannot store: {problems[0]}")
        parent = indexed[slice(*chunk.parent_span)]
        records.append(ChunkRecord(source, chunk.text, metadata, chunk.embed_text, parent))
    return records


def loaded_documents(
    task: FileTask,
    splitting: Splitting,
    corpus: CorpusCleaner | None,
    counts: dict[str, int],
    removed: list[Removal] | None = None,
) -> Iterator[Document]:
    """The task's documents (from the scan's cache when it kept them), the run's boilerplate
    removed (counted into ``counts``, each removal appended to ``removed``)."""
    kept = corpus.take(task.name) if corpus is not None and task.documents is None else None
    documents = (
        kept
        if kept is not None
        else task.load(splitting.max_file_bytes, splitting.cleaning, splitting.parsers)
    )
    for document in documents:
        yield apply_corpus(document, corpus, counts, [] if removed is None else removed)


def split_documents(
    task: FileTask,
    splitting: Splitting,
    corpus: CorpusCleaner | None = None,
    removed: list[Removal] | None = None,
) -> tuple[list[tuple[Document, list[ChunkRecord]]], dict[str, int]]:
    """Each document of ``task`` (as split: cleaned) with its records, and the cleaning
    counts (the run's removals appended to ``removed``); raises a ``FileError`` naming the
    file. ``split_task`` is this, flattened."""
    counts = new_counts()
    out = []
    try:
        config = splitting.content_types
        if config is None:
            config = config_for_root(task.root)
        # globs are relative to the task's own root, whatever prefix its source key has
        in_root = None
        if task.base is not None and task.path is not None and task.root is not None:
            in_root = FoundFile(task.path, task.root).source
        chunks = 0
        documents = list(loaded_documents(task, splitting, corpus, counts, removed))
        if documents:
            splitting.base  # noqa: B018  (built once per run: the model's load is no file's time)
        with deadline.within(splitting.split_seconds):  # parsing was bounded on its own
            for document in documents:
                deadline.check()
                records = records_of(
                    document, task.source, splitting, config, in_root, task.access
                )
                chunks += len(records)
                if splitting.max_chunks and chunks > splitting.max_chunks:
                    raise too_many_chunks(task.path or task.source, splitting.max_chunks)
                out.append((document, records))
    except deadline.SplitTimeout as exc:
        raise FileTimeoutError(
            task.path or task.source, f"{exc} (--file-timeout): stopped"
        ) from None
    except FileError:
        raise
    except Exception as exc:
        raise FileError(task.path or task.source, f"{type(exc).__name__}: {exc}") from exc
    return out, counts


def too_many_chunks(path: object, bound: int) -> TooManyChunksError:
    return TooManyChunksError(
        path,
        f"splits into more than {bound} chunks (--max-chunks-per-file {bound}): not "
        f"embedded; to ingest it, raise the bound (e.g. --max-chunks-per-file {bound * 10}, "
        "0: none) or raise --chunk-size",
    )


def split_task(
    task: FileTask, splitting: Splitting, corpus: CorpusCleaner | None = None
) -> FileChunks:
    """All records of ``task``, in order; raises a ``FileError`` naming the file."""
    removed: list[Removal] = []
    documents, counts = split_documents(task, splitting, corpus, removed)
    chunks = FileChunks(record for _document, records in documents for record in records)
    chunks.cleaning = counts
    chunks.removed = removed
    chunks.copies = corpus.copies_of(task.name) if corpus is not None else []
    chunks.notes, chunks.lost = file_notes(document for document, _records in documents)
    return chunks

