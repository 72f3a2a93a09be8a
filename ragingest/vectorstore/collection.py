"""``Collection``: one stored collection, whatever the store: a ``port.DenseIndex`` with the
model's embeddings and the side stores composed beside it (the lexical index, the parent
sections, the read gate, the run's journal).

Contract: a ``seam.ChunkSource`` and LangChain's ``VectorStore`` (its reads, guarded when
opened for principals: ``collection_reads.CollectionReads``) and a ``seam.ChunkSink``.
``opening.open_store`` builds one from a ``port.Backend``.

Writes: ``add_documents`` embeds ``embed_texts`` (default: the contents; the breadcrumb reaches
the model without changing the stored text that offsets refer to) unless ``vectors`` has one
(given vectors enter the embedding cache when the embeddings are one: ``store_vectors``),
stores ``parent_texts`` as parent sections, and never stores underscore metadata keys (a
loader's hints). A Document without an id gets ``ids.stored_id`` (its content hash). Each
write holds the read gate exclusively; ``journal`` (set by the run's writer) is called with
the ids and "add"/"delete" before the index is written, so a killed run's half-done writes can
be found and finished (``delete(ids, journal=False)`` is the recovery's). The index is written
first, then the lexical index; a kill between them leaves them apart, and the first write of
a collection that finds the counts apart makes the lexical index hold the index's ids again
(``sync_lexical``), so they converge.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from ragingest.vectorstore.access.principals import Access
from ragingest.vectorstore.access.write import chunk_access, parent_access, stored_access
from ragingest.vectorstore.collection_reads import CollectionReads
from ragingest.vectorstore.ids import stored_id
from ragingest.vectorstore.langchain_reads import LangChainReads
from ragingest.vectorstore.lexical.index import lexical_text
from ragingest.vectorstore.parent_links import parent_ids, referenced_parents
from ragingest.vectorstore.port import DenseIndex
from ragingest.vectorstore.seam import parse_filter

if TYPE_CHECKING:
    from ragingest.vectorstore.gate import ReadGate

log = logging.getLogger(__name__)

Journal = Callable[[list[str], str], None]
PAGE = 1000  # chunks per index read of the upkeep


class Collection(CollectionReads, LangChainReads):
    """One collection: index, embeddings and side stores (module docstring).

    ``lexical``/``parents``/``gate``: the side stores (None: none). ``remote``: each index call
    is a network round trip. ``principals``: read as them (``GuardedSource``). ``keep``: an
    object the collection holds while it lives (a temporary copy of the store it reads)."""

    def __init__(
        self,
        index: DenseIndex,
        embeddings: Embeddings | None = None,
        *,
        lexical: Any = None,
        parents: Any = None,
        gate: ReadGate | None = None,
        remote: bool = False,
        principals: Access = None,
        keep: object = None,
    ) -> None:
        super().__init__(
            index, embeddings, lexical=lexical, parents=parents, gate=gate, remote=remote,
            principals=principals,
        )  # fmt: skip
        self._keep = keep
        self._lexical_synced = False
        self.journal: Journal | None = None

    # --- writes -------------------------------------------------------------------------

    def _writing(self) -> contextlib.AbstractContextManager[None]:
        """The read gate held exclusively (re-entrant: the writer may hold it already)."""
        gate = self._source.gate
        return gate.writing() if gate is not None else contextlib.nullcontext()

    def add_documents(
        self,
        documents: list[Document],
        *,
        embed_texts: Sequence[str] | None = None,
        parent_texts: Sequence[str] | None = None,
        vectors: Sequence[list[float] | None] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        """Store ``documents`` (module docstring); ids from ``ids=``, the documents or their
        content. Returns the ids."""
        ids = list(kwargs.get("ids") or [doc.id or stored_id(doc) for doc in documents])
        if not documents:
            return ids
        texts = list(embed_texts or [doc.page_content for doc in documents])
        found = list(vectors or [None] * len(documents))
        embeddings = self._source.embeddings
        if embeddings is None:
            raise ValueError("the store has no embedding function to embed the documents with")
        given = [(t, v) for t, v in zip(texts, found, strict=True) if v is not None]
        if given and hasattr(embeddings, "store_vectors"):
            embeddings.store_vectors(given)
        todo = [t for t, v in zip(texts, found, strict=True) if v is None]
        computed = iter(embeddings.embed_documents(todo) if todo else [])
        embedded = [v if v is not None else next(computed) for v in found]
        metadatas = [_stored(doc.metadata) for doc in documents]
        with self._writing():  # readers see the write whole; their kept id sets drop
            self._sync_before_write()
            if self.journal is not None:
                self.journal(ids, "add")
            parents = self._source.parent_store
            if parents is not None and parent_texts is not None:
                from ragingest.vectorstore.records.parents import parent_documents

                sections = parent_documents(documents, parent_texts)
                if sections:
                    parents.mset(sections)
            stored = [doc.page_content for doc in documents]
            self._source.index.add(ids, embedded, stored, metadatas)
            lexical = self._source.lexical
            if lexical is not None:
                pairs = zip(stored, metadatas, strict=True)
                lexical.add(ids, [lexical_text(text, meta) for text, meta in pairs])
        return ids

    def delete(self, ids: list[str] | None = None, *, journal: bool = True, **kwargs: Any) -> None:
        """Delete chunks by id (or what ``where=`` matches) from the index and the lexical
        index, and the parent sections no remaining chunk refers to."""
        where = kwargs.pop("where", None)
        if kwargs:
            raise TypeError(f"delete takes ids or where=, not {', '.join(sorted(kwargs))}")
        index = self._source.index
        if ids is None and where:
            ids = index.ids(parse_filter(where))
        if not ids:
            return
        parents = self._source.parent_store
        with self._writing():
            self._sync_before_write()
            if journal and self.journal is not None:
                self.journal(list(ids), "delete")
            linked = parent_ids(index, ids) if parents is not None else set()
            index.delete(ids)
            if self._source.lexical is not None:
                self._source.lexical.delete(ids)
            if linked and parents is not None:
                parents.mdelete(sorted(linked - referenced_parents(index, linked)))

    def set_access(self, ids: Sequence[str], access: Sequence[str]) -> None:
        """Replace the readers (``schema.ACCESS_KEY``) of the chunks ``ids`` and of their
        parent sections in place: no text or vector changes."""
        ids = list(ids)
        if not ids:
            return
        value = stored_access(access)
        parents = self._source.parent_store
        with self._writing():
            linked = chunk_access(self._source.index, ids, value)
            if linked and parents is not None:
                parent_access(parents, sorted(linked), value)

    # --- upkeep -------------------------------------------------------------------------

    def sync_lexical(self, prune: bool = True) -> int:
        """Make the lexical index hold the index's ids: index what it lacks (from the stored
        text) and, with ``prune``, drop ids the index no longer has. Returns how many changed.

        Safe beside a running writer: the lexical index is read before the dense index, and a
        writer adds to the dense index first and deletes from it first, so an id the lexical
        index holds that the dense index lacks at the later read is really gone."""
        lexical = self._source.lexical
        if lexical is None:
            return 0
        indexed = lexical.ids()
        index = self._source.index
        present = set(index.ids())
        extra = sorted(indexed - present) if prune else []
        missing = sorted(present - indexed)
        lexical.delete(extra)
        for i in range(0, len(missing), PAGE):
            got = index.get(missing[i : i + PAGE])
            lexical.add([c.id for c in got], [lexical_text(c.text or "", c.metadata) for c in got])
        return len(extra) + len(missing)

    def _sync_before_write(self) -> None:
        """Once per collection: a run killed between the two indexes left them apart."""
        if self._lexical_synced or self._source.lexical is None:
            return
        self._lexical_synced = True
        if not self.lexical_in_step():
            changed = self.sync_lexical()
            log.warning("lexical index brought in step with the store: %d chunks", changed)

    def prune_parents(self) -> int:
        """Delete every parent section no chunk of the collection refers to (a full pass, for
        repairs); returns how many went."""
        parents = self._source.parent_store
        if parents is None:
            return 0
        live = parent_ids(self._source.index, None)
        dead = [key for key in parents.yield_keys() if key not in live]
        parents.mdelete(dead)
        return len(dead)


def _stored(metadata: dict[str, Any]) -> dict[str, Any]:
    """What the store keeps of a document's metadata: no underscore keys (a loader's hints,
    ``schema.LOADER_HINTS``, on a Document a LangChain app adds itself)."""
    return {k: v for k, v in metadata.items() if not k.startswith("_")}
