"""Context for the generator: retrieved passages, auto-merged, within a token budget.

Two steps after retrieval, each a pure function over LangChain ``Document``s that carry
ragingest's chunk metadata (``doc_id``, ``start_index``/``end_index``, ``parent_id``,
``parent_start``/``parent_end``):

- ``auto_merge(passages, parents, children, threshold)`` (LlamaIndex's AutoMergingRetriever
  idea): when the hits of one parent section are at least ``threshold`` of that parent's
  chunks (and at least two), they are replaced by the parent, at the rank of its best hit; a
  passage that a chosen parent already contains is dropped. Otherwise the chunks stay: a
  single hit does not drag its whole section into a small context.
- ``fit_budget(passages, max_tokens, count)``: passages are taken best first and each is
  added whole while the running total of ``count(text)`` stays within ``max_tokens``; one that
  does not fit is skipped and a smaller one further down may still fit. Never truncated: half
  a rule is worse than a missing one, because the generator cannot tell it was cut. With
  ``sections`` (parent_id -> parent section), a passage next to one already taken in the same
  section is joined to it (``assembly.pack``): a reference across a chunk boundary comes whole.

``ContextRetriever`` composes them over any retriever that returns such chunks (a
``ChunkRetriever`` with ``parents=False``) and is itself a LangChain ``BaseRetriever``.
``token_counter`` turns a tokenizer you name into ``count``: the budget is in the generator's
tokens, which are not the embedding model's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import BaseDocumentCompressor, Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from ragingest.defaults import JOIN_NEIGHBOURS
from ragingest.retrieval.assembly import CHUNK_ONLY, Sections, TokenCounter, chunk_ids, pack
from ragingest.retrieval.search import candidate_depth
from ragingest.retrieval.sync_retriever import SyncRetriever
from ragingest.vectorstore.seam import ChunkSource, Condition, ParentSource


def token_counter(tokenizer: str | TokenCounter | None = None) -> TokenCounter:
    """``count(text) -> tokens`` for a budget. ``tokenizer``: a callable; a path to a
    ``tokenizer.json`` or to a local Hugging Face tokenizer folder (the generator's own);
    ``"tiktoken:ENCODING"`` (``models.tiktoken_names``: cl100k_base offline); ``None``
    or ``"model"``: the embedding model's tokenizer."""
    if callable(tokenizer):
        return tokenizer
    if tokenizer is None or tokenizer == "model":
        from ragingest.models.resolve import load_model_info

        # the Rust tokenizer: the same counts as the transformers wrapper, without importing it
        rust = load_model_info().backend_tokenizer
        return lambda text: len(rust.encode(text, add_special_tokens=False).ids)
    if tokenizer.startswith("tiktoken:"):
        from ragingest.models.tiktoken_names import tiktoken_encoding

        try:
            encoding = tiktoken_encoding(tokenizer.split(":", 1)[1])
        except ValueError as exc:
            raise ValueError(
                f"tokenizer {tokenizer!r}: {exc}; or name a tokenizer.json / tokenizer folder"
            ) from exc
        return lambda text: len(encoding.encode(text, disallowed_special=()))
    path = Path(tokenizer)
    if path.is_file() or (path / "tokenizer.json").is_file():
        from tokenizers import Tokenizer

        loaded = Tokenizer.from_file(str(path if path.is_file() else path / "tokenizer.json"))
        return lambda text: len(loaded.encode(text, add_special_tokens=False).ids)
    raise ValueError(
        f"unknown tokenizer {tokenizer!r}: give a tokenizer.json path, a tokenizer folder, "
        "'tiktoken:cl100k_base', 'model' (the embedding model's) or a callable"
    )


@dataclass
class Context:
    """What the generator gets: passages best first, their token total and what was left out."""

    documents: list[Document]
    tokens: int
    max_tokens: int | None
    skipped: list[Document] = field(default_factory=list)  # did not fit the budget

    @property
    def text(self) -> str:
        return "\n\n".join(doc.page_content for doc in self.documents)


def fit_budget(
    passages: Sequence[Document],
    max_tokens: int | None,
    count: TokenCounter,
    sections: Sections | None = None,
) -> Context:
    """Best first, each passage whole, while the total stays within ``max_tokens`` (no
    budget: all of them); with ``sections``, neighbours in one section joined
    (``assembly.pack``)."""
    if sections is not None:
        kept_, skipped_, total_ = pack(passages, max_tokens, count, sections)
        return Context(kept_, total_, max_tokens, skipped_)
    kept: list[Document] = []
    skipped: list[Document] = []
    total = 0
    for passage in passages:
        tokens = count(passage.page_content)
        if max_tokens is not None and total + tokens > max_tokens:
            skipped.append(passage)
            continue
        kept.append(passage)
        total += tokens
    return Context(kept, total, max_tokens, skipped)


def _span(doc: Document) -> tuple[str, int, int]:
    meta = doc.metadata
    source = str(meta.get("doc_id") or meta.get("source", ""))
    start = int(meta.get("start_index", 0))
    return source, start, int(meta.get("end_index", start + len(doc.page_content)))


def _inside(inner: tuple[str, int, int], outer: tuple[str, int, int]) -> bool:
    return inner[0] == outer[0] and outer[1] <= inner[1] and inner[2] <= outer[2]


def _hits(doc: Document) -> set[str]:
    return set(chunk_ids(doc))


def auto_merge(
    passages: Sequence[Document],
    parents: Callable[[list[str]], list[Document | None]],
    children: Callable[[str], int],
    threshold: float = 0.5,
) -> list[Document]:
    """Replace the hits of a parent by the parent when they are ``>= threshold`` of its chunks
    (``children(parent_id)``, at least two); ``parents(ids)`` gives parent texts (None when
    missing: the chunks stay)."""
    by_parent: dict[str, set[str]] = {}
    for doc in passages:
        key = str(doc.metadata.get("parent_id") or "")
        if key:
            by_parent.setdefault(key, set()).update(_hits(doc))
    merge = [
        key
        for key, hits in by_parent.items()
        if len(hits) >= 2 and len(hits) >= threshold * max(children(key), 1)
    ]
    texts = dict(zip(merge, parents(merge), strict=True)) if merge else {}
    out: list[Document] = []
    spans: list[tuple[str, int, int]] = []
    for doc in passages:
        key = str(doc.metadata.get("parent_id") or "")
        parent = texts.get(key)
        if parent is not None:
            doc = _as_parent(doc, parent, by_parent[key])
        span = _span(doc)
        if any(_inside(span, taken) for taken in spans):
            continue
        held = [i for i, taken in enumerate(spans) if _inside(taken, span)]
        at = held[0] if held else len(out)  # a parent takes the rank of its best passage
        keep = [i for i in range(len(out)) if i not in held]
        out = [out[i] for i in keep if i < at] + [doc] + [out[i] for i in keep if i > at]
        spans = [spans[i] for i in keep if i < at] + [span] + [spans[i] for i in keep if i > at]
    return out


def _as_parent(hit: Document, parent: Document, hits: set[str]) -> Document:
    meta = dict(hit.metadata)
    for key in CHUNK_ONLY:
        meta.pop(key, None)
    meta.update(
        start_index=int(meta["parent_start"]),
        end_index=int(meta["parent_end"]),
        chunk_ids=sorted(hits),
        expanded=True,
        merged=True,
    )
    return Document(page_content=parent.page_content, metadata=meta)


class ContextRetriever(SyncRetriever):
    """Chunks from ``base`` → ``auto_merge`` (when ``merge_threshold``) → ``compressor``
    (a LangChain ``BaseDocumentCompressor``, e.g. ``focus.SectionFocus``) → ``fit_budget``
    (neighbours in one section joined when ``join_neighbours`` and a ``parent_store``) → the
    first ``k``.

    ``base`` must return chunks (not parents), best first, more than fit: e.g.
    ``ChunkRetriever(parents=False, k=20)``. ``store`` is the collection (for the number of
    chunks of each parent), ``parent_store`` the ``ParentStore`` (None: no auto-merging, no
    joins)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    base: BaseRetriever
    store: ChunkSource
    parent_store: ParentSource | None
    merge_threshold: float | None = 0.5
    max_context_tokens: int | None = None
    k: int | None = None  # at most this many passages (None: as many as fit)
    count: TokenCounter | None = None  # None: the embedding model's tokenizer
    join_neighbours: bool = JOIN_NEIGHBOURS
    compressor: BaseDocumentCompressor | None = None  # a second stage before the budget

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, k: int | None = None
    ) -> list[Document]:
        return self.context(query, k=k).documents

    def context(self, query: str, k: int | None = None) -> Context:
        """The whole assembly, with its token total and the passages the budget left out;
        ``k``: at most this many passages for this call (default: the retriever's ``k``).
        A ``k`` above the retriever's asks ``base`` for ``search.candidate_depth(k)`` chunks."""
        limit = self.k if k is None else k
        if k is not None and (self.k is None or k > self.k):
            passages = self.base.invoke(query, k=candidate_depth(k))
        else:
            passages = self.base.invoke(query)
        if self.merge_threshold is not None and self.parent_store is not None:
            passages = auto_merge(
                passages, self.parent_store.mget, self._children, self.merge_threshold
            )
        if self.compressor is not None:
            passages = list(self.compressor.compress_documents(passages, query))
        if self.count is None:
            self.count = token_counter()
        joins = self.join_neighbours and self.parent_store is not None
        sections = self._sections() if joins else None
        context = fit_budget(passages, self.max_context_tokens, self.count, sections)
        if limit is not None and len(context.documents) > limit:
            extra = context.documents[limit:]
            context.documents = context.documents[:limit]
            context.tokens -= sum(self.count(doc.page_content) for doc in extra)
        return context

    def _sections(self) -> Sections:
        """parent_id -> its section, each read once for this call."""
        read: dict[str, Document | None] = {}

        def section(key: str) -> Document | None:
            if key not in read and self.parent_store is not None:
                read[key] = self.parent_store.mget([key])[0]
            return read.get(key)

        return section

    def _children(self, parent_id: str) -> int:
        return len(self.store.chunk_ids(Condition("parent_id", "$eq", parent_id)))
