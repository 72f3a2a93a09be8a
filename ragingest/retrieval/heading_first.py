"""``HeadingFirstRetriever``: the public LangChain retriever over an ingested collection.

One class with every option a typed field (``help()``, an IDE and mypy show them), the pair of
``HeadingFirstSplitter``: it searches the chunks that splitter made and returns their heading
sections. ``ragingest.retriever(...)`` is a thin convenience that builds one.

Contract: constructing it opens the collection read-only (``open_store(create=False)``: the
same refusals: no store, no collection, another model; a store that can't be written, or on a
full disk, is read from a temporary copy: ``open_store``'s ``copy_if_read_only``), or takes
an opened one (``from_collection``, any backend; ``source``), and builds the search
(``retriever.ChunkRetriever``: parent expansion, de-duplication, filters, hybrid, exactly
``k``), wrapped in ``context.ContextRetriever`` when ``max_context_tokens`` or ``auto_merge``
is given. Under a budget the chunks are the default passages (``parents=False``) and a
passage repeated at another place of a file is kept at each (``dedup=False``, unless
``auto_merge``); the candidates are read ``search.candidate_depth(k)`` deep. Every read goes
through ``vectorstore.guarded.GuardedSource`` under ``principals``: chunks, lexical hits,
parents, neighbours and auto-merge counts of documents they may not read never come back.

LangChain habits work or say what to write instead: ``search_kwargs={"k": 2, "filter":
{...}}`` (also ``fetch_k``, ``lambda_mult``) sets those fields; ``invoke(q, k=2)`` and
``invoke(q, config={"configurable": {"k": 2}})`` (or ``{"search_kwargs": {"k": 2}}``) set
``k`` for one call, and ``{"principals": [...], "where": {...}}`` (or ``search_kwargs``'
``filter``) read that call as those principals, under that filter ANDed with the
retriever's (``for_call``); a configurable key naming a setting no call can change is
refused, never ignored; ``k="2"`` is read as 2; a ``k`` below 0 or not a whole number is a
``ValueError`` saying so; a query that finds nothing under a ``where`` naming a metadata key
no chunk of the collection has raises ``ValueError`` naming the key and the keys there are
(a typo otherwise reads as "no answer").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Self

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.runnables import RunnableConfig
from pydantic import ConfigDict, Field, PrivateAttr, model_validator

from ragingest.defaults import DENSE_WEIGHT, FUSION, SEARCH_TYPE, SEARCH_TYPES
from ragingest.retrieval.call_options import SEARCH_KWARGS, call_options, required_keys, whole_k
from ragingest.retrieval.context import Context, ContextRetriever, token_counter
from ragingest.retrieval.field_docs import document_fields
from ragingest.retrieval.filters import as_filter
from ragingest.retrieval.focus import second_stage
from ragingest.retrieval.fusion import check_fusion
from ragingest.retrieval.opening import guard_collection, open_guarded
from ragingest.retrieval.retriever import ChunkRetriever
from ragingest.retrieval.search import candidate_depth
from ragingest.retrieval.settings import RetrievalSettings
from ragingest.retrieval.sync_retriever import SyncRetriever
from ragingest.vectorstore.access.guarded import GuardedSource, both, guarded
from ragingest.vectorstore.access.principals import Access, AllPrincipals, Principals, as_access
from ragingest.vectorstore.seam import ChunkSource, Filter


class HeadingFirstRetriever(RetrievalSettings, SyncRetriever):
    """A LangChain retriever over an ingested collection (how it reads: the module docstring).

    ``HeadingFirstRetriever(persist_dir="chroma_db", collection="kb", k=4)``; each field below
    is a keyword of ``ragingest.retriever`` too (how to search: ``RetrievalSettings``'; where
    to read and as whom: its own)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    collection: str = Field(
        description="the collection name given to ingest",
    )
    persist_dir: str | Path | None = Field(
        default=None,
        description=(
            "the Chroma directory (None: with a Chroma server and a PostgreSQL records database, "
            "a reader needs no files of the ingest machine)"
        ),
    )
    model: str | None = Field(
        default=None,
        description="the embedding model (default: the one the collection was built with)",
    )
    records_url: str | None = Field(
        default=None,
        description=(
            "the records database (default $RAGINGEST_RECORDS_URL, else SQLite in persist_dir); "
            "PostgreSQL also holds the lexical index and the parent sections"
        ),
    )
    server: Any = Field(
        default=None,
        description=(
            "a store server, e.g. a ChromaServer (default: the one of an enclosing use_server, "
            "else the embedded persist_dir)"
        ),
    )
    source: Any = Field(
        default=None,
        description=(
            "an opened collection to read (open_store(...) without principals, or any "
            "vectorstore.seam.ChunkSource) instead of opening persist_dir/collection; "
            "HeadingFirstRetriever.from_collection(store, ...) sets it"
        ),
    )
    principals: Principals | AllPrincipals | None = Field(
        default=None,
        description="who reads: Principals.of(user=, groups=[...]), ['user:NAME', 'group:G'] "
        "or ALL; required under an access policy (else PrincipalsRequiredError)",
    )
    search_kwargs: dict[str, Any] | None = Field(
        default=None,
        description="LangChain's habit: k, filter, fetch_k and lambda_mult by name",
    )
    _search: ChunkRetriever = PrivateAttr()
    _inner: ChunkRetriever | ContextRetriever = PrivateAttr()
    _keys: set[str] | None = PrivateAttr(default=None)  # the metadata keys the chunks have

    @model_validator(mode="before")
    @classmethod
    def _langchain_habits(cls, data: Any) -> Any:
        """``search_kwargs`` folded into the fields; the checks that name what to write."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for key, value in (data.get("search_kwargs") or {}).items():
            if key not in SEARCH_KWARGS:
                raise ValueError(
                    f"search_kwargs[{key!r}] is not an option here; it takes "
                    f"{', '.join(SEARCH_KWARGS)} (or give them as keywords: k=4, where={{...}})"
                )
            field = SEARCH_KWARGS[key]
            given = data.get(field)
            default = cls.model_fields[field].default
            if given is not None and given != default and given != value:
                raise ValueError(f"search_kwargs[{key!r}] and {field}= disagree: give one")
            data[field] = value
        if "k" in data:
            data["k"] = whole_k(data["k"])
        if "principals" in data:
            data["principals"] = as_access(data["principals"])
        if data.get("fetch_k") is not None:
            data["fetch_k"] = whole_k(data["fetch_k"], "fetch_k")
        search_type = data.get("search_type", SEARCH_TYPE)
        if search_type not in SEARCH_TYPES:
            raise ValueError(f"search_type must be 'similarity' or 'mmr', not {search_type!r}")
        check_fusion(data.get("fusion", FUSION), data.get("dense_weight", DENSE_WEIGHT))
        return data

    def model_post_init(self, context: Any) -> None:
        """Open the collection (or guard the one given) and build the search (module
        docstring)."""
        if self.source is not None:
            source = guard_collection(self.source, self.principals, hybrid=self.hybrid)
        else:  # every read below goes through it
            source = open_guarded(
                self.persist_dir, self.collection, self.principals, hybrid=self.hybrid,
                model=self.model, records_url=self.records_url, server=self.server,
                copy_if_read_only=True,
            )  # fmt: skip
        budget = self.max_context_tokens is not None or self.auto_merge is not None
        parents = (not budget if self.parents is None else self.parents) and (
            self.auto_merge is None or not budget
        )
        dedup = self.dedup
        if dedup is None:  # a paragraph repeated elsewhere is evidence at its own place
            dedup = not (self.max_context_tokens is not None and self.auto_merge is None)
        depth = candidate_depth(self.k) if budget else self.k
        self._search = ChunkRetriever(
            store=source,
            parent_store=source.parent_store if parents else None,
            k=depth,
            fetch_k=self.fetch_k or candidate_depth(depth),
            parents=parents,
            dedup=dedup,
            where=as_filter(self.where),
            search_type=self.search_type,
            lambda_mult=self.lambda_mult,
            hybrid=self.hybrid,
            fusion=self.fusion,
            dense_weight=self.dense_weight,
        )
        self._inner = self._search
        if budget:
            self._inner = ContextRetriever(
                base=self._search,
                store=source,
                parent_store=source.parent_store,
                merge_threshold=self.auto_merge,
                max_context_tokens=self.max_context_tokens,
                k=self.k,
                count=token_counter(self.tokenizer),
                join_neighbours=self.join_neighbours,
                compressor=second_stage(self.second_stage, source.inner, source),
            )

    @classmethod
    def from_collection(cls, collection: ChunkSource, **fields: Any) -> Self:
        """A retriever over an opened ``collection`` (``open_store(...)``, any backend), named
        by its ``name``; ``fields`` as the constructor's."""
        name = str(getattr(collection, "name", "") or fields.pop("collection", ""))
        return cls(collection=name, source=collection, **fields)

    @property
    def store(self) -> ChunkSource:
        """The store the search reads."""
        return self._search.store

    def invoke(
        self, input: str, config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[Document]:
        """LangChain's ``invoke``; ``k`` for this call from ``k=`` or ``config["configurable"]``,
        and from there its ``where`` and ``principals`` (``call_options``)."""
        options = call_options(config, kwargs)
        retriever = self.for_call(options.principals, options.where)
        k = {} if options.k is None else {"k": options.k}
        return super(HeadingFirstRetriever, retriever).invoke(input, config, **k)

    async def ainvoke(
        self, input: str, config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[Document]:
        """LangChain's ``ainvoke``, as ``invoke``."""
        options = call_options(config, kwargs)
        retriever = self.for_call(options.principals, options.where)
        k = {} if options.k is None else {"k": options.k}
        return await super(HeadingFirstRetriever, retriever).ainvoke(input, config, **k)

    def unmatched_principals(self) -> list[str]:
        """The principals this retriever reads as that no chunk of the collection names
        (``GuardedSource.unmatched``): ``["group:HR"]`` where the policy wrote ``hr``, so
        its answers are only the public documents. [] without a policy or for ``ALL``."""
        source = self._search.store
        return source.unmatched() if isinstance(source, GuardedSource) else []

    def for_call(self, principals: Access = None, where: Filter | None = None) -> Self:
        """This retriever reading as ``principals`` (None: its own) with ``where`` ANDed to its
        own filter (None: none), over the same open store: what one call's
        ``config["configurable"]`` asks. Every read still goes through one
        ``GuardedSource`` (``NoAccessPolicyError`` naming principals on a collection
        without a policy, ``PrincipalsRequiredError`` for none on one with)."""
        if principals is None and where is None:
            return self
        source = self._search.store
        if principals is not None:
            assert isinstance(source, GuardedSource)
            source = guarded(source, principals)
        search = self._search.model_copy(
            update={
                "store": source,
                "parent_store": None if self._search.parent_store is None else source.parent_store,
                "where": both(as_filter(self._search.where), where),
            }
        )
        search._with_chunks = None  # the new source's
        inner: ChunkRetriever | ContextRetriever = search
        if isinstance(self._inner, ContextRetriever):
            inner = self._inner.model_copy(
                update={"base": search, "store": source, "parent_store": source.parent_store}
            )
        copy = self.model_copy(
            update={"principals": principals if principals is not None else self.principals}
        )
        copy._search, copy._inner, copy._keys = search, inner, self._keys
        return copy

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, k: int | None = None
    ) -> list[Document]:
        found = self._inner._get_relevant_documents(query, run_manager=run_manager, k=k)
        if not found and self.where:
            self._check_keys()
        return found

    def context(self, query: str, k: int | None = None) -> Context:
        """The passages with their token total and what the budget left out (``ContextRetriever
        .context``); without a budget every passage, counted by ``tokenizer``."""
        if isinstance(self._inner, ContextRetriever):
            return self._inner.context(query, k=k)
        documents = self.invoke(query, k=k)
        count = token_counter(self.tokenizer)
        return Context(documents, sum(count(d.page_content) for d in documents), None)

    def _check_keys(self) -> None:
        """Refuse a ``where`` that can never match: a key no chunk has (not under ``$ne``)."""
        if self._keys is None:
            self._keys = {key for chunk in self.store.chunks() for key in chunk.metadata}
        missing = sorted(required_keys(as_filter(self.where)) - self._keys)
        if missing:
            raise ValueError(
                f"where names {', '.join(map(repr, missing))}, which no chunk of collection "
                f"{self.collection!r} has; its metadata keys: {', '.join(sorted(self._keys))}"
            )


document_fields(HeadingFirstRetriever)  # help() shows each field's meaning
