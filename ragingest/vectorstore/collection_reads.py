"""The reads of a collection: what it is made of and the seam's reads, through one
``seam.ChunkSource``; ``collection.Collection`` adds LangChain's reads and the writes.
``open_reader`` returns a ``CollectionReads`` alone: it imports no LangChain retriever
machinery (a cold ``ragingest query`` would pay ~0.6 s for it) and has no write method.

Contract: ``CollectionReads(index, embeddings, lexical=, parents=, gate=, remote=,
principals=)`` reads through ``index_source.IndexSource`` (every chunk) or, opened for
``principals``, through ``access.guarded.GuardedSource`` over it: then every read, the side
indexes included (``lexical``, ``parent_store``: read-only), admits only what they may read,
and the raw ``index`` is refused (``PermissionError``). Opened naming nobody, the reads that
LangChain's go through (``_langchain_source``) raise ``PrincipalsRequiredError`` on a
collection with an access policy while the seam's reads, the writer's, see every chunk.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ragingest.vectorstore.access.guarded import GuardedSource
from ragingest.vectorstore.access.principals import Access, principals_required
from ragingest.vectorstore.index_source import IndexSource
from ragingest.vectorstore.port import DenseIndex
from ragingest.vectorstore.seam import (
    ChunkSource,
    Filter,
    LexicalSearch,
    ParentSource,
    StoredChunk,
    chunks_with_dense,
)

if TYPE_CHECKING:  # types only: langchain_core.embeddings imports its runnables
    from langchain_core.embeddings import Embeddings

    from ragingest.vectorstore.gate import ReadGate


class CollectionReads:
    """A collection's reads (module docstring)."""

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
    ) -> None:
        self._source = IndexSource(index, embeddings, lexical, parents, gate, remote)
        self._principals = principals
        self._reads: ChunkSource = (
            self._source if principals is None else GuardedSource(self._source, principals)
        )
        self._policy: bool | None = None

    # --- what it is made of -------------------------------------------------------------

    @property
    def name(self) -> str:
        """The collection's name in the store (its physical name)."""
        return self._source.index.name

    @property
    def principals(self) -> Access:
        """Who it was opened to read as (None: nobody named: the writer's open)."""
        return self._principals

    @property
    def index(self) -> DenseIndex:
        """The dense index itself (every chunk): not handed out by a collection opened for
        principals (``PermissionError``)."""
        if self._principals is not None:
            raise PermissionError(
                "this collection was opened for principals: its raw index reads every chunk"
            )
        return self._source.index

    @property
    def embeddings(self) -> Embeddings | None:
        """The model's LangChain ``Embeddings`` (None: counts and ids only)."""
        return self._source.embeddings

    @property
    def lexical(self) -> LexicalSearch | None:
        """The lexical index (guarded when opened for principals; read-only then)."""
        return self._reads.lexical

    @property
    def parent_store(self) -> ParentSource | None:
        """The parent sections (guarded when opened for principals; read-only then)."""
        return self._reads.parent_store

    @property
    def gate(self) -> ReadGate | None:
        return self._source.gate

    @property
    def remote(self) -> bool:
        return self._source.remote

    @property
    def chunks_with_dense(self) -> bool:
        """A hint (``seam.ReadHints``): whether a ranking should have the dense search bring
        its chunks."""
        return chunks_with_dense(self._reads)

    # --- the seam's reads ---------------------------------------------------------------

    def embed_query(self, text: str) -> list[float]:
        return self._reads.embed_query(text)

    def count(self) -> int:
        return self._reads.count()

    def nearest(
        self, vector: Sequence[float], n: int, where: Filter | None = None
    ) -> list[tuple[str, float]]:
        return self._reads.nearest(vector, n, where)

    def nearest_chunks(
        self, vector: Sequence[float], n: int, where: Filter | None = None
    ) -> list[tuple[StoredChunk, float]]:
        return self._reads.nearest_chunks(vector, n, where)

    def chunks(
        self, ids: Sequence[str] | None = None, where: Filter | None = None
    ) -> list[StoredChunk]:
        return self._reads.chunks(ids, where)

    def held(self, ids: Sequence[str], where: Filter | None = None) -> set[str]:
        return self._reads.held(ids, where)

    def chunk_ids(self, where: Filter | None = None) -> list[str]:
        return self._reads.chunk_ids(where)

    def vectors(self, ids: Sequence[str], where: Filter | None = None) -> dict[str, list[float]]:
        return self._reads.vectors(ids, where)

    def access_policy(self) -> bool:
        return self._reads.access_policy()

    def ids(self) -> list[str]:
        """The ids of every chunk it reads."""
        return self.chunk_ids()

    def lexical_in_step(self) -> bool:
        """Whether the lexical index holds as many chunks as the index (True without one)."""
        return self._source.lexical_in_step()

    def _langchain_source(self) -> ChunkSource:
        """LangChain's reads: guarded; refused on a policy collection opened naming nobody."""
        if self._principals is None:
            if self._policy is None:
                self._policy = self._source.access_policy()
            if self._policy:
                raise principals_required()
        return self._reads
