"""LangChain's ``VectorStore`` reads over the store seam: what ``open_store(...)`` returns
answers ``as_retriever``, ``similarity_search*``, ``max_marginal_relevance_search*`` and
``get_by_ids`` as ``langchain_chroma.Chroma`` does, whatever the store.

Contract of ``LangChainReads`` (subclassed by ``collection.Collection``): every read goes to
``_langchain_source()``, a ``seam.ChunkSource`` (the collection's guarded reads when it was
opened for principals; it raises ``PrincipalsRequiredError`` on a collection with an access
policy opened naming nobody), so enforcement stays in ``access.guarded``. Results are
``langchain_chroma``'s: ``k=4``, ``fetch_k=20``, ``lambda_mult=0.5`` by default; a Document
per chunk with its id and stored metadata; a chunk stored without text left out; scores are
cosine distances (``similarity_search_with_score``), relevance ``1 - distance``; MMR keeps the
candidates' order. ``filter`` takes the dict syntax ``seam.parse_filter`` reads (Chroma's and
LangChain's). ``get`` is Chroma's dict read kept for callers that use it (``ids``,
``documents``, ``metadatas``, ``embeddings`` when asked). A keyword these reads do not know
(Chroma's ``where_document``) is a ``TypeError`` naming it, never ignored.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from langchain_core.documents import Document
from langchain_core.vectorstores import VectorStore
from langchain_core.vectorstores.utils import maximal_marginal_relevance

from ragingest.defaults import LAMBDA_MULT, MIN_CANDIDATES, TOP_K
from ragingest.vectorstore.seam import ChunkSource, Filter, parse_filter

# ragingest's defaults are LangChain's own (k=4, fetch_k=20, lambda_mult=0.5, as
# langchain_chroma's), so a LangChain app's results do not move; tests hold them equal
DEFAULT_K, DEFAULT_FETCH_K, DEFAULT_LAMBDA = TOP_K, MIN_CANDIDATES, LAMBDA_MULT


def _known_only(kwargs: Mapping[str, Any]) -> None:
    if kwargs:
        raise TypeError(
            f"unsupported search argument(s) {', '.join(sorted(kwargs))}: these reads take "
            "k, filter (a metadata dict), and for MMR fetch_k and lambda_mult"
        )


def _where(filter: Mapping[str, Any] | Filter | None) -> Filter | None:
    return parse_filter(filter)


class LangChainReads(VectorStore):
    """LangChain's reads over ``_langchain_source()`` (module docstring)."""

    def _langchain_source(self) -> ChunkSource:
        raise NotImplementedError  # the seam source LangChain's reads go through

    def _query_vector(self, query: str) -> list[float]:
        return self._langchain_source().embed_query(query)

    def similarity_search(
        self, query: str, k: int = DEFAULT_K, filter: Any = None, **kwargs: Any
    ) -> list[Document]:
        """The ``k`` chunks nearest ``query``, nearest first."""
        return [doc for doc, _ in self.similarity_search_with_score(query, k, filter, **kwargs)]

    def similarity_search_with_score(
        self, query: str, k: int = DEFAULT_K, filter: Any = None, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        """The ``k`` nearest with their cosine distance (lower is nearer)."""
        _known_only(kwargs)
        source = self._langchain_source()
        return self._scored(source, source.embed_query(query), k, filter)

    def similarity_search_by_vector(
        self, embedding: list[float], k: int = DEFAULT_K, filter: Any = None, **kwargs: Any
    ) -> list[Document]:
        """The ``k`` chunks nearest ``embedding``, nearest first."""
        _known_only(kwargs)
        return [doc for doc, _ in self._scored(self._langchain_source(), embedding, k, filter)]

    def similarity_search_by_vector_with_relevance_scores(
        self, embedding: list[float], k: int = DEFAULT_K, filter: Any = None, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        """As ``langchain_chroma``'s: the ``k`` nearest with their cosine distance."""
        _known_only(kwargs)
        return self._scored(self._langchain_source(), embedding, k, filter)

    def _scored(
        self, source: ChunkSource, vector: Sequence[float], k: int, filter: Any
    ) -> list[tuple[Document, float]]:
        found = source.nearest_chunks(vector, k, _where(filter))
        return [(chunk.document(), distance) for chunk, distance in found]

    def _select_relevance_score_fn(self) -> Callable[[float], float]:
        """Distances are cosine (the port's contract): relevance is ``1 - distance``."""
        return self._cosine_relevance_score_fn

    def max_marginal_relevance_search(
        self,
        query: str,
        k: int = DEFAULT_K,
        fetch_k: int = DEFAULT_FETCH_K,
        lambda_mult: float = DEFAULT_LAMBDA,
        filter: Any = None,
        **kwargs: Any,
    ) -> list[Document]:
        """``k`` of the ``fetch_k`` nearest chosen by maximal marginal relevance."""
        _known_only(kwargs)
        return self.max_marginal_relevance_search_by_vector(
            self._query_vector(query), k, fetch_k, lambda_mult, filter
        )

    def max_marginal_relevance_search_by_vector(
        self,
        embedding: list[float],
        k: int = DEFAULT_K,
        fetch_k: int = DEFAULT_FETCH_K,
        lambda_mult: float = DEFAULT_LAMBDA,
        filter: Any = None,
        **kwargs: Any,
    ) -> list[Document]:
        """``k`` of the ``fetch_k`` nearest ``embedding`` chosen by maximal marginal relevance,
        in the candidates' order (as ``langchain_chroma``'s)."""
        _known_only(kwargs)
        source = self._langchain_source()
        flt = _where(filter)
        found = source.nearest_chunks(embedding, fetch_k, flt)
        if not found:
            return []
        stored = source.vectors([chunk.id for chunk, _ in found], flt)
        candidates = [(chunk, stored[chunk.id]) for chunk, _ in found if chunk.id in stored]
        chosen = set(
            maximal_marginal_relevance(
                np.array(embedding, dtype=np.float32),
                [vector for _, vector in candidates],
                k=k,
                lambda_mult=lambda_mult,
            )
        )
        return [chunk.document() for i, (chunk, _) in enumerate(candidates) if i in chosen]

    def get_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        """The stored chunks among ``ids`` (those stored without text left out), in the
        store's order."""
        found = self._langchain_source().chunks(list(ids))
        return [chunk.document() for chunk in found if chunk.text is not None]

    def get(
        self,
        ids: str | Sequence[str] | None = None,
        where: Mapping[str, Any] | Filter | None = None,
        limit: int | None = None,
        offset: int | None = None,
        include: Iterable[str] | None = None,
    ) -> dict[str, Any]:
        """Chroma's dict read (module docstring): ``ids`` always, ``documents`` and
        ``metadatas`` by default, ``embeddings`` when in ``include``."""
        source = self._langchain_source()
        wanted = [ids] if isinstance(ids, str) else None if ids is None else list(ids)
        chunks = source.chunks(wanted, _where(where))
        start = offset or 0
        chunks = chunks[start : None if limit is None else start + limit]
        fields = set(include if include is not None else ("documents", "metadatas"))
        got: dict[str, Any] = {"ids": [chunk.id for chunk in chunks]}
        got["documents"] = [c.text for c in chunks] if "documents" in fields else None
        got["metadatas"] = [c.metadata for c in chunks] if "metadatas" in fields else None
        if "embeddings" in fields:
            vectors = source.vectors(got["ids"])
            got["embeddings"] = [vectors[i] for i in got["ids"]]
        return got

    def add_texts(
        self,
        texts: Iterable[str],
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        """LangChain's ``add_texts``: the texts as Documents through ``add_documents``."""
        texts = list(texts)
        metas = metadatas or [{} for _ in texts]
        documents = [
            Document(page_content=t, metadata=dict(m)) for t, m in zip(texts, metas, strict=True)
        ]
        return self.add_documents(documents, **({"ids": ids} if ids else {}), **kwargs)

    @classmethod
    def from_texts(
        cls,
        texts: list[str],
        embedding: Any,
        metadatas: list[dict[str, Any]] | None = None,
        **kwargs: Any,
    ) -> LangChainReads:
        """Not supported: a collection is opened where it lives (``NotImplementedError``)."""
        raise NotImplementedError(
            "open a collection with ragingest.vectorstore.open_store(persist_dir, name) and "
            "call its add_documents"
        )
