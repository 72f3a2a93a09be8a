"""``IndexSource``: the seam's reads over one ``port.DenseIndex`` and the side stores beside it,
unguarded: every chunk, whoever asks.

Contract: a ``seam.ChunkSource`` whose chunk reads delegate to the index (``chunks`` is the
index's ``get``, ``chunk_ids`` its ``ids``), ``embed_query`` to the model's ``Embeddings``,
``access_policy`` to the collection's marker (``identity.ACCESS_POLICY_KEY``), and whose
``lexical``, ``parent_store`` and ``gate`` are the side stores as given. ``collection.Collection``
reads through it, behind ``access.guarded.GuardedSource`` when it was opened for principals;
nothing else should hand it out to a reader.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragingest.vectorstore.identity import ACCESS_POLICY_KEY
from ragingest.vectorstore.port import DenseIndex
from ragingest.vectorstore.seam import Filter, StoredChunk

if TYPE_CHECKING:  # types only: langchain_core.embeddings imports its runnables
    from langchain_core.embeddings import Embeddings

    from ragingest.vectorstore.gate import ReadGate


@dataclass
class IndexSource:
    """The unguarded reads of one collection (module docstring). ``remote``: each index call
    is a network round trip (the backend's)."""

    index: DenseIndex
    embeddings: Embeddings | None = None
    lexical: Any = None  # a LexicalIndex / PgLexicalIndex (``seam.LexicalSearch`` and writes)
    parent_store: Any = None  # a LangChain BaseStore of parent sections (``seam.ParentSource``)
    gate: ReadGate | None = None
    remote: bool = False

    @property
    def chunks_with_dense(self) -> bool:
        """A hint (``seam.ReadHints``): on a server the chunks come in the dense search's call
        instead of one more."""
        return self.remote

    def embed_query(self, text: str) -> list[float]:
        """The query's vector, by the collection's model."""
        if self.embeddings is None:
            raise ValueError("the store was opened without a model to embed a query with")
        return list(self.embeddings.embed_query(text))

    def count(self) -> int:
        return self.index.count()

    def lexical_in_step(self) -> bool:
        """Whether the lexical index holds as many chunks as the index (True without one)."""
        return self.lexical is None or self.lexical.count() == self.count()

    def nearest(
        self, vector: Sequence[float], n: int, where: Filter | None = None
    ) -> list[tuple[str, float]]:
        return self.index.nearest(vector, n, where)

    def nearest_chunks(
        self, vector: Sequence[float], n: int, where: Filter | None = None
    ) -> list[tuple[StoredChunk, float]]:
        return self.index.nearest_chunks(vector, n, where)

    def chunks(
        self, ids: Sequence[str] | None = None, where: Filter | None = None
    ) -> list[StoredChunk]:
        return self.index.get(ids, where)

    def held(self, ids: Sequence[str], where: Filter | None = None) -> set[str]:
        return self.index.held(ids, where)

    def chunk_ids(self, where: Filter | None = None) -> list[str]:
        return self.index.ids(where)

    def vectors(self, ids: Sequence[str], where: Filter | None = None) -> dict[str, list[float]]:
        return self.index.vectors(ids, where)

    def access_policy(self) -> bool:
        """Whether the collection was written under an access policy (its marker)."""
        return bool(self.index.metadata().get(ACCESS_POLICY_KEY))
