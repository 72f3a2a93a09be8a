"""``ragingest.retriever``: a LangChain retriever over an ingested collection.

Seeds 002/004: search the small chunks, give the model their parent section; never fill the
top k with copies of the same text (overlap makes neighbours look alike).

Contract of ``ChunkRetriever.invoke(query)``: the ``fetch_k`` nearest chunks (Chroma, with the
``where`` filter) are taken best first. With ``parents``, each is replaced by its parent
section from the docstore beside Chroma (the chunk itself when the parent is missing). With
``dedup``, a candidate that overlaps one already taken from the same file is merged into it
(the union of the two spans, rebuilt exactly from their offsets), and one whose text a taken
one already holds, or nearly repeats (another copy of the file), is dropped. At most ``k``
Documents come back, best first; each has ``start_index``/``end_index`` of the returned span,
``score`` (the best chunk's cosine), ``chunk_ids`` (the chunks that matched) and ``expanded``
(a parent was returned). ``select`` is that choice alone; ``ragingest evaluate`` uses it too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from ragingest.evaluate.metrics import near_identical
from ragingest.vectorstore.parents import ParentStore


@dataclass
class Span:
    """A candidate passage: a chunk or a parent, with its exact span in its document."""

    source: str
    start: int
    end: int
    text: str
    metadata: dict[str, Any]
    score: float
    chunk_ids: list[str] = field(default_factory=list)
    expanded: bool = False

    def overlaps(self, other: Span) -> bool:
        return self.source == other.source and self.start < other.end and other.start < self.end

    def absorb(self, other: Span) -> None:
        """Grow to the union of both spans; both texts are exact slices of one document."""
        if other.start < self.start:
            self.text = other.text[: self.start - other.start] + self.text
            self.start = other.start
        if other.end > self.end:
            self.text = self.text + other.text[len(other.text) - (other.end - self.end) :]
            self.end = other.end
        self.chunk_ids.extend(i for i in other.chunk_ids if i not in self.chunk_ids)
        self.expanded = self.expanded or other.expanded


class ChunkRetriever(BaseRetriever):
    """Parent expansion, de-duplication, metadata filters and ``k`` over a ``ChunkStore``."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    store: Any
    parent_store: Any = None
    k: int = 4
    fetch_k: int = 20
    parents: bool = True
    dedup: bool = True
    where: dict[str, Any] | None = None

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        hits = self.store.similarity_search_with_score(
            query, k=max(self.k, self.fetch_k), filter=self.where
        )
        # the collection is in cosine space: distance = 1 - cosine
        candidates = [self._span(doc, 1.0 - distance) for doc, distance in hits]
        if self.parents and self.parent_store is not None:
            candidates = self._expand(candidates)
        return [_document(span) for span in select(candidates, self.k, self.dedup)]

    @staticmethod
    def _span(doc: Document, score: float) -> Span:
        meta = dict(doc.metadata)
        return Span(
            source=str(meta.get("doc_id") or meta.get("source", "")),
            start=int(meta.get("start_index", 0)),
            end=int(meta.get("end_index", len(doc.page_content))),
            text=doc.page_content,
            metadata=meta,
            score=float(score),
            chunk_ids=[str(meta.get("chunk_id") or doc.id or "")],
        )

    def _expand(self, candidates: list[Span]) -> list[Span]:
        keys = [str(c.metadata.get("parent_id", "")) for c in candidates]
        wanted = sorted({k for k in keys if k})
        found = dict(zip(wanted, self.parent_store.mget(wanted), strict=True)) if wanted else {}
        out: list[Span] = []
        for candidate, key in zip(candidates, keys, strict=True):
            parent = found.get(key)
            start = candidate.metadata.get("parent_start")
            end = candidate.metadata.get("parent_end")
            if parent is None or start is None or end is None:
                out.append(candidate)
                continue
            out.append(
                Span(
                    source=candidate.source,
                    start=int(start),
                    end=int(end),
                    text=parent.page_content,
                    metadata=candidate.metadata,
                    score=candidate.score,
                    chunk_ids=list(candidate.chunk_ids),
                    expanded=(int(start), int(end))
                    != (candidate.metadata.get("start_index"), candidate.metadata.get("end_index")),
                )
            )
        return out


def select(candidates: list[Span], k: int, dedup: bool = True) -> list[Span]:
    """The first ``k`` candidates, best first; with ``dedup``, a candidate overlapping a chosen
    one (same document) is merged into it, and one whose text a chosen one already holds (or
    nearly repeats: another copy of the file) is dropped."""
    chosen: list[Span] = []
    for candidate in candidates:
        if len(chosen) == k:
            break
        if dedup:
            same = next((c for c in chosen if c.overlaps(candidate)), None)
            if same is not None:
                same.absorb(candidate)
                continue
            if any(_repeats(candidate.text, c.text) for c in chosen):
                continue
        chosen.append(candidate)
    return _merge_touching(chosen) if dedup else chosen


def _repeats(text: str, chosen: str) -> bool:
    """``text`` adds nothing to ``chosen``: it is inside it, or nearly the same words."""
    body = text.strip()
    return bool(body) and (body in chosen or near_identical(text, chosen))


def _merge_touching(spans: list[Span]) -> list[Span]:
    out: list[Span] = []
    for span in spans:
        same = next((s for s in out if s.overlaps(span)), None)
        if same is None:
            out.append(span)
        else:
            same.absorb(span)
    return out


def _document(span: Span) -> Document:
    meta = {k: v for k, v in span.metadata.items() if not k.startswith("_")}
    meta.update(
        start_index=span.start,
        end_index=span.end,
        score=round(span.score, 4),
        chunk_ids=list(span.chunk_ids),
        expanded=span.expanded,
    )
    if span.expanded:
        for key in ("chunk_index", "token_count", "content_hash", "chunk_id", "h3"):
            meta.pop(key, None)
    return Document(page_content=span.text, metadata=meta)


def retriever(
    persist_dir: str | Path,
    collection: str,
    *,
    k: int = 4,
    parents: bool = True,
    dedup: bool = True,
    where: dict[str, Any] | list[str] | None = None,
    fetch_k: int | None = None,
    model: str | None = None,
    records_url: str | None = None,
) -> ChunkRetriever:
    """A LangChain ``BaseRetriever`` over an ingested collection.

    ``where`` is a Chroma filter (``{"source": "a.md"}``) or the CLI's conditions
    (``["source=a.md", "price<=5000"]``); ``fetch_k`` (default ``max(20, 4 * k)``) chunks are
    fetched so that ``k`` remain after parent expansion and de-duplication. ``records_url``:
    the records database that resolves the name (see ``open_store``).
    """
    from ragingest.ingest.query import parse_where
    from ragingest.vectorstore.store import open_store

    store = open_store(persist_dir, collection, model=model, create=False, records_url=records_url)
    if isinstance(where, list):
        where = parse_where(where)
    physical = getattr(store, "_collection", None)
    name = physical.name if physical is not None else collection
    return ChunkRetriever(
        store=store,
        parent_store=ParentStore(persist_dir, name) if parents else None,
        k=k,
        fetch_k=fetch_k or max(20, 4 * k),
        parents=parents,
        dedup=dedup,
        where=where,
    )
