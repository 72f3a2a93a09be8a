"""The writer: records into the store and the record manager in the order that keeps a killed
run recoverable, and the recovery itself.

Per group of files: their file states out → journal the ids (``vectorstore.records``) →
the store → record manager (clears the journal) → their stale chunks out (journaled the same
way) → their new file states. ``recover`` finishes what the journal says was half done;
``reconcile`` repairs a store and a record manager that disagree. So the store's ids are
exactly the record manager's keys, and a file without a state row is parsed again (its
unchanged chunks are skipped, its vectors come from the cache).

Every write and delete of chunks goes through the collection's public ``add_documents`` and
``delete`` (``vectorstore.collection.Collection``, whatever the store), recovery and reconcile
included, so whatever it keeps beside the index (parents, a lexical index) stays in step.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.indexing import index
from langchain_core.vectorstores import VectorStore

from ragingest.defaults import WRITE_BATCH_SIZE
from ragingest.pipeline.plan import FileTask
from ragingest.pipeline.report import RunReport
from ragingest.pipeline.split import FileChunks
from ragingest.pipeline.state import FileState, FileStates
from ragingest.schema import ACCESS_KEY, ChunkRecord
from ragingest.vectorstore.collection import Collection
from ragingest.vectorstore.records.origins import origins, ragingest_sources
from ragingest.vectorstore.records.record_manager import IndexRecords

log = logging.getLogger(__name__)

DELETE_BATCH = 1000  # ids per store delete (under Chroma's max batch) and per SQL statement
INDEX_BATCH_CAP = 10_000  # keys in one record-manager statement (SQLite takes 32 766 variables)
Group = list[tuple[FileTask, FileChunks]]


class RecordSink(VectorStore):
    """What ``index()`` writes to for one group: it hands ``index()``'s documents (by id) to
    the store with their records' embedded texts, parent texts and engine vectors."""

    def __init__(
        self, store: Collection, records: Sequence[ChunkRecord], ids: Sequence[str]
    ) -> None:
        """``ids``: the records' ids (``ChunkRecord.id``, a hash: computed once by the caller)."""
        self.store = store
        self.records = dict(zip(ids, records, strict=True))

    @property
    def embeddings(self) -> Embeddings | None:
        """The store's embeddings (what LangChain's ``index`` reads)."""
        return self.store.embeddings

    def add_documents(self, documents: list[Document], **kwargs: Any) -> list[str]:
        """Write ``documents`` with their records' embed texts and vectors; returns their ids."""
        ids = list(kwargs.get("ids") or [doc.id for doc in documents])
        records = [self.records[i] for i in ids]
        return self.store.add_documents(
            documents,
            ids=ids,
            embed_texts=[r.embed_text for r in records],
            parent_texts=[r.parent_text for r in records],
            vectors=[r.vector for r in records],
        )

    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool | None:
        """Delete the chunks ``ids`` from the store; returns True."""
        self.store.delete(ids, **kwargs)
        return True

    def add_texts(self, texts: Any, metadatas: Any = None, **kwargs: Any) -> list[str]:
        """Not supported: the sink writes records (``NotImplementedError``)."""
        raise NotImplementedError("the writer adds records, not texts")

    def similarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[Document]:
        """Not supported: a write sink does not search (``NotImplementedError``)."""
        raise NotImplementedError("a write sink does not search")

    @classmethod
    def from_texts(cls, texts: Any, embedding: Any, metadatas: Any = None, **kwargs: Any) -> Any:
        """Not supported: the writer makes the sink (``NotImplementedError``)."""
        raise NotImplementedError("a write sink is made by the writer")


class Writer:
    """Writes one physical collection: its store, record manager and file states."""

    def __init__(
        self,
        store: Collection,
        manager: IndexRecords,
        states: FileStates,
        report: RunReport,
        write_batch_size: int = WRITE_BATCH_SIZE,
    ) -> None:
        self.store, self.manager, self.states = store, manager, states
        self.report = report
        self.write_batch_size = write_batch_size
        store.journal = manager.journal

    def write(self, group: Group) -> None:
        """The files' old states out, their records into the store and the record manager (adds,
        then their stale chunks out), and only then their new states: a state row always
        describes exactly the chunks stored for its file."""
        if not group:
            return
        self.states.delete([task.source for task, _chunks in group])
        records = [record for _task, chunks in group for record in chunks]
        self.embed_new(records)
        with self._gate():  # readers see the group's files all before or all after
            if records:
                documents = [record.document() for record in records]  # each id hashed once
                sink = RecordSink(self.store, records, [str(doc.id) for doc in documents])
                result = index(
                    documents,
                    self.manager,
                    sink,
                    batch_size=index_batch(len(records), self.write_batch_size),
                    cleanup="scoped_full",
                    source_id_key=lambda doc: sink.records[str(doc.id)].source,
                    key_encoder=_record_id,
                )
                self.report.added += result["num_added"]
                self.report.updated += result["num_updated"]
                self.report.skipped += result["num_skipped"]
                self.report.deleted += result["num_deleted"]
            empty = [task.source for task, chunks in group if not chunks]
            if empty:  # nothing of the file went through index(): its old chunks go here
                self.report.deleted += self.delete_sources(empty)
            self._own_readers(group)
        self.states.put(
            (task.source, FileState(task.stamp, len(chunks), access=task.access))
            for task, chunks in group
            if task.stamp
        )
        log.info(
            "wrote %d files (%d chunks): %s",
            len(group),
            len(records),
            ", ".join(task.source for task, _chunks in group),
        )

    def _own_readers(self, group: Group) -> None:
        """The readers of chunks that carry their own (pages of one document naming
        different lists: no file-wide list, ``FileTask.access`` None) written in place:
        ``index()`` skips a chunk whose id is unchanged, and readers are not part of the id
        (``schema.ID_EXCLUDED``), so a change of a page's readers would not reach it."""
        by_readers: dict[tuple[str, ...], list[str]] = {}
        for task, chunks in group:
            if task.access is not None:
                continue
            for record in chunks:
                own = record.metadata.get(ACCESS_KEY)
                if isinstance(own, list):
                    by_readers.setdefault(tuple(map(str, own)), []).append(record.id)
        for access, ids in sorted(by_readers.items()):
            self.store.set_access(ids, access)

    def _gate(self) -> Any:
        """The store's read gate, held exclusively (``vectorstore.gate``)."""
        gate = self.store.gate
        return gate.writing() if gate is not None else contextlib.nullcontext()

    def embed_new(self, records: Sequence[ChunkRecord]) -> None:
        """Embed the records ``index()`` will add (no vector yet, no record yet): ``write``
        does, before the gate is taken, so readers wait for the store writes only; the run
        does as soon as a model batch of them is split, so the encoder need not wait for a
        whole write group."""
        todo = [r for r in records if r.vector is None]
        if not todo:
            return
        known = self.manager.exists([r.id for r in todo])
        todo = [r for r, recorded in zip(todo, known, strict=True) if not recorded]
        if todo:
            embeddings = self.store.embeddings
            if embeddings is None:
                raise ValueError("the store has no embeddings to compute the chunks' vectors")
            vectors = embeddings.embed_documents([r.embed_text for r in todo])
            for record, vector in zip(todo, vectors, strict=True):
                record.vector = vector

    def set_access(self, source: str, access: tuple[str, ...], state: FileState | None) -> None:
        """Give every chunk of ``source`` (and their parent sections) the readers ``access`` in
        one store update under the write gate, then its ``state`` row (when it has one): a
        reader sees the old readers on every copy or the new ones on every copy.

        One journaled step: the state row first says its readers are unknown (``access``
        None, which no policy's readers equal), then the copies change, then the row names
        the new readers. A run stopped anywhere in between leaves a row the next run under a
        policy finds different from the readers it computes, so it writes them to every copy
        again: the change is completed (or, the config reverted, rolled back); a row never
        names readers its chunks do not hold."""
        keys = self.manager.list_keys(group_ids=[source])
        if state is not None:
            self.states.put([(source, replace(state, access=None))])
        with self._gate():
            self.store.set_access(keys, access)
        if state is not None:
            self.states.put([(source, replace(state, access=access))])

    def delete_sources(self, sources: Sequence[str]) -> int:
        """Delete every chunk of ``sources``: file states, then the store (journaled), records."""
        self.states.delete(sources)
        deleted = 0
        for source in sources:
            keys = self.manager.list_keys(group_ids=[source])
            for i in range(0, len(keys), DELETE_BATCH):
                part = keys[i : i + DELETE_BATCH]
                self.store.delete(part)
                self.manager.delete_keys(part)
            deleted += len(keys)
        return deleted

    def delete_missing(self, known: Iterable[str], keep: set[str]) -> None:
        """Delete the sources recorded before (records or states) that this run did not see,
        except one whose records all carry other code's ids and no file state (written by
        LangChain's ``index()`` through this record manager: ragingest has no file for it)."""
        # the kept sources stay whoever wrote them: their records need no reading
        ours = ragingest_sources(self.manager, set(known) | keep)
        for source in sorted(set(self.manager.list_groups()) - ours - keep):
            log.info("%s: written by other code (not ragingest's ids), left alone", source)
        for source in sorted(ours - keep):
            with self._gate():
                deleted = self.delete_sources([source])
            self.report.add_deleted(source, deleted)

    def recover(self) -> None:
        """Finish a killed run's half-done writes, then reconcile if the store and the record
        manager still disagree."""
        recovered = self.manager.recover(self._delete_unjournaled)
        if recovered:
            log.warning("finished an interrupted run: %d half-written chunks removed", recovered)
        if self.store.count() != self.manager.count():
            self.reconcile()

    def _delete_unjournaled(self, ids: list[str]) -> None:
        self.store.delete(ids, journal=False)

    def reconcile(self) -> None:
        """The store and the record manager disagree (a directory copied in part, a file
        deleted by hand): stored ids without a record go; records without a stored id go with their
        files' states, so those files are parsed again now. Documents other code wrote
        (``vectorstore.origins``: ids not of ``ChunkRecord.id``'s form, or recorded under
        another namespace) are left alone: never updated nor deleted."""
        everything = self.store.ids()
        found = origins(everything, self.manager)
        in_chroma, recorded = found.ours_in_chroma, found.ours_recorded
        if in_chroma == recorded:
            log.info(
                "%d documents not written by ragingest left alone", len(everything) - len(in_chroma)
            )
            return
        extra = sorted(in_chroma - recorded)
        for i in range(0, len(extra), DELETE_BATCH):
            self._delete_unjournaled(extra[i : i + DELETE_BATCH])
        missing = recorded - in_chroma
        sources = [
            group
            for group in self.manager.list_groups()
            if missing & set(self.manager.list_keys(group_ids=[group]))
        ]
        self.states.delete(sources)
        lost = sorted(missing)
        for i in range(0, len(lost), DELETE_BATCH):
            self.manager.delete_keys(lost[i : i + DELETE_BATCH])
        pruned = self.store.prune_parents()
        log.warning(
            "Chroma and the record manager disagreed: %d chunks removed, %d files to parse "
            "again, %d orphan parent sections removed",
            len(extra),
            len(sources),
            pruned,
        )


def index_batch(chunks: int, write_batch_size: int) -> int:
    """``index()``'s batch size for a group of ``chunks``: as few batches as keep each at most
    twice ``write_batch_size`` (and at most ``INDEX_BATCH_CAP``, else ``write_batch_size``).
    A group is whole files, so it runs over the write batch by a file's chunks; a batch of its
    own for those few would cost a store write and the record manager's round trips (each a
    commit: a disk sync) again."""
    size = max(1, write_batch_size)
    merged = -(-chunks // max(1, chunks // size))
    return max(1, merged if merged <= max(size, INDEX_BATCH_CAP) else size)


def _record_id(document: Document) -> str:
    """``index()``'s key of a record's document: the record's id (``ChunkRecord.id``)."""
    assert document.id is not None
    return document.id
