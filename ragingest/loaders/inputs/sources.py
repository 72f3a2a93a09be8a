"""Any source of a run → typed work: paths stay paths (the file walk handles them); a LangChain
``BaseLoader`` (ours or any langchain-community one) or an iterable of ``Document``s becomes a
``DocumentSource``, whose ``tasks()`` are ``SourceTask``s: one per ``metadata["source"]``.

Contract:

- ``source_items.split_sources(sources)`` sorts what a run was given into paths and
  ``DocumentSource``s.
- ``DocumentSource.tasks()`` loads once, normalizes (``loaders.markdown.pages.normalize_documents``:
  pages and elements joined, front matter as metadata) and groups by ``metadata["source"]``.
  A loader's documents without one are keyed by the loader's name; given documents without
  one are refused (``SourceError``): the key is what re-indexing skips, replaces and deletes
  by. A loader that raises gives ``SourceError`` naming it; the run keeps that source's
  chunks from the last good run. With a bounded ``ParserPool`` a loader runs in its worker,
  under the per-file bounds (``--file-timeout``, ``--file-memory-mb``): past one the source
  fails with kind ``timeout`` or ``memory``, naming it, and the run goes on.
- ``SourceTask.content_hash`` is the sha256 of the normalized documents (text and
  metadata): equal hashes mean the same chunks, so an unchanged task is not split or
  embedded. ``SourceTask.group`` is the record-manager group (and state row) of the task:
  ``GROUP_PREFIX`` + key, so a document source never collides with a walked file and the
  run can tell the two apart when it deletes what vanished.
"""

from __future__ import annotations

import hashlib
import json
import logging
import pickle
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import cast

from langchain_core.documents import Document

from ragingest.errors import FileError
from ragingest.loaders.cleaning.rules import CleaningRules
from ragingest.loaders.formats.partition import setup as setup_unstructured
from ragingest.loaders.markdown.pages import normalize_documents
from ragingest.loaders.notes import add_note
from ragingest.loaders.process.bounded import ParserPool
from ragingest.schema import ACCESS_KEY, from_content

log = logging.getLogger(__name__)
GROUP_PREFIX = "doc:"  # record-manager groups of document sources (files: their path)


class SourceError(FileError):
    """A loader or a given document could not be ingested; the run goes on with the rest.
    ``kind``: ``source_failed``, or the bound it ran past (``timeout``, ``memory``)."""

    kind = "source_failed"

    def __init__(self, path: object, reason: str, kind: str | None = None) -> None:
        super().__init__(path, reason)
        if kind:
            self.kind = kind


@dataclass(frozen=True)
class SourceTask:
    """The documents of one source key, normalized and ready to split."""

    key: str  # metadata["source"] of its documents
    content_hash: str  # sha256 of the documents' text and metadata
    documents: tuple[Document, ...]
    origin: str  # the given source that produced it (a loader's name, or "documents")

    @property
    def group(self) -> str:
        """The record group of this source's documents."""
        return GROUP_PREFIX + self.key

    @property
    def size(self) -> int:
        """The total length of the source's documents, in characters."""
        return sum(len(d.page_content) for d in self.documents)


@dataclass
class DocumentSource:
    """A non-file source of a run."""

    name: str  # for the report: "TextLoader(notes.txt)", "documents"
    load: Callable[[], Iterable[Document]]
    given: bool = False  # documents given directly (each must carry metadata["source"])
    # one of ragingest's own loaders: its documents' ``_`` keys are its hints; any other
    # source's metadata is content and never sets one (``schema.from_content``)
    ours: bool = False

    def tasks(
        self, cleaning: CleaningRules | None = None, parsers: ParserPool | None = None
    ) -> list[SourceTask]:
        """Load, normalize and group; ``SourceError`` naming this source on any failure.

        With a bounded ``parsers`` pool a loader runs in its worker process, under the
        ``--file-timeout``/``--file-memory-mb`` bounds of a file (normalizing and hashing
        too: a YAML alias bomb in front matter expands there, not here): past one, the
        ``SourceError``'s kind is ``timeout`` or ``memory``. A loader class the calling script
        defines (its ``__main__``, which the worker never imports) is sent by value. Given
        documents, and a loader that can't be sent to another process (it doesn't pickle), run
        here, unbounded."""
        if parsers is None or not parsers.bounded or self.given:
            return source_tasks(self.name, self.load, self.given, cleaning, self.ours)
        sent = _sendable(self.load)
        if sent is None:
            return source_tasks(self.name, self.load, self.given, cleaning, self.ours)
        try:
            return parsers.call(
                self.name, sent_source_tasks, self.name, sent, self.given, cleaning, self.ours
            )
        except SourceError:
            raise
        except FileError as exc:  # past a bound, or the worker died
            raise SourceError(self.name, exc.reason, exc.kind) from exc


def _sendable(load: Callable[[], Iterable[Document]]) -> bytes | None:
    """``load`` (a loader's bound ``lazy_load``) pickled for the worker, None when it does not
    pickle. cloudpickle, not pickle: what the worker can import goes by reference as with
    pickle, and what the calling script defines (``__main__``: the worker's is
    ``parse_worker``) goes by value, so a loader class written in a plain script runs bounded."""
    import cloudpickle  # only when a loader runs in the worker

    try:
        return cast(bytes, cloudpickle.dumps(load))
    except Exception:
        log.warning(
            "%s can't be sent to the parser process (it does not pickle): it loads in this "
            "process, without the --file-timeout/--file-memory-mb bounds",
            getattr(getattr(load, "__self__", None), "__class__", type(load)).__name__,
        )
        return None


def sent_source_tasks(
    name: str,
    sent: bytes,
    given: bool = False,
    cleaning: CleaningRules | None = None,
    ours: bool = False,
) -> list[SourceTask]:
    """``source_tasks`` of a ``load`` pickled by ``_sendable`` (the worker's entry point)."""
    return source_tasks(name, pickle.loads(sent), given, cleaning, ours)


def source_tasks(
    name: str,
    load: Callable[[], Iterable[Document]],
    given: bool = False,
    cleaning: CleaningRules | None = None,
    ours: bool = False,
) -> list[SourceTask]:
    """``DocumentSource(name, load, given, ours).tasks(cleaning)`` in this process (the worker's
    entry point: module level, so it pickles by name)."""
    owner = getattr(load, "__self__", None)
    if owner is not None and is_unstructured(owner):
        setup_unstructured()  # its spaCy model offline, no telemetry (in whichever process)
    try:
        loaded = list(load())
    except FileError as exc:
        raise SourceError(name, exc.reason) from exc
    except Exception as exc:
        raise SourceError(name, f"the loader failed: {type(exc).__name__}: {exc}") from exc
    keyed: list[Document] = []
    for i, document in enumerate(loaded):
        if not isinstance(document, Document):
            raise SourceError(name, f"item {i} is a {type(document).__name__}, not a Document")
        if not ours:
            document = _without_internal_keys(document)
        source = document.metadata.get("source")
        if source in (None, ""):
            if given:
                raise SourceError(
                    name,
                    f"document {i} has no metadata['source']: set one (re-indexing keys "
                    "documents by it: unchanged ones are skipped, vanished ones deleted)",
                )
            document = Document(
                page_content=document.page_content,
                metadata={**document.metadata, "source": name},
                id=document.id,
            )
        elif not isinstance(source, str):
            document = Document(
                page_content=document.page_content,
                metadata={**document.metadata, "source": str(source)},
                id=document.id,
            )
        keyed.append(document)
    try:
        normalized = normalize_documents(keyed, cleaning)
    except Exception as exc:
        raise SourceError(name, f"cannot normalize its documents: {exc}") from exc
    by_key: dict[str, list[Document]] = {}
    for document in normalized:
        if document.page_content.strip():
            by_key.setdefault(document.metadata["source"], []).append(document)
    return [SourceTask(key, content_hash(docs), tuple(docs), name) for key, docs in by_key.items()]


def is_unstructured(loader: object) -> bool:
    return "unstructured" in type(loader).__module__ or type(loader).__name__.startswith(
        "Unstructured"
    )


def _without_internal_keys(document: Document) -> Document:
    """``document`` without the internal keys its content set, said in a note."""
    metadata, left_out = from_content(document.metadata)
    if not left_out:
        return document
    shown = ", ".join(ascii(k[:40]) for k in left_out[:5])
    add_note(metadata, f"internal metadata keys are not taken from content, left out: {shown}")
    return Document(page_content=document.page_content, metadata=metadata, id=document.id)


def content_hash(documents: Iterable[Document]) -> str:
    """sha256 of the documents' text and metadata, in order (JSON, sorted keys), without their
    readers (``schema.ACCESS_KEY``): a change of readers alone is written in place, never
    split nor embedded again (``pipeline.access_sync``)."""
    digest = hashlib.sha256()
    for document in documents:
        metadata = {k: v for k, v in document.metadata.items() if k != ACCESS_KEY}
        digest.update(document.page_content.encode("utf-8"))
        digest.update(b"\x1e")
        digest.update(json.dumps(metadata, sort_keys=True, default=str).encode("utf-8"))
        digest.update(b"\x1d")
    return digest.hexdigest()


def unique_tasks(tasks: Iterable[SourceTask]) -> Iterator[SourceTask | SourceError]:
    """The tasks, with a ``SourceError`` instead of each task whose key an earlier task of
    the run already has (two sources giving documents the same ``metadata["source"]``)."""
    owners: dict[str, str] = {}
    for task in tasks:
        owner = owners.setdefault(task.key, task.origin)
        if owner != task.origin:
            yield SourceError(
                task.origin,
                f"its documents with source {task.key!r} clash with those of {owner}: give "
                "them a distinct metadata['source']",
            )
            continue
        yield task
