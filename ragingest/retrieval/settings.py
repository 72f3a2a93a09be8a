"""``RetrievalSettings``: how a reader searches a collection, each setting declared once.

The fields, with their meaning, of ``HeadingFirstRetriever`` (which inherits them, so
``help()`` and LangChain see them as its own) and so the keywords of ``ragingest.retriever``;
their defaults are ``ragingest.defaults``' values, the ones ``retrieval.query.search``,
``evaluate.trace`` and the CLI's ``--help`` state too (tests/cli/test_help_defaults.py and
tests/pipeline/test_ingest_api.py hold them equal). Where to read (collection, store, model,
server, principals) stays with the retriever.
"""

from __future__ import annotations

from langchain_core.documents import BaseDocumentCompressor
from pydantic import BaseModel, ConfigDict, Field

from ragingest.defaults import (
    DENSE_WEIGHT,
    FUSION,
    HYBRID,
    JOIN_NEIGHBOURS,
    LAMBDA_MULT,
    SEARCH_TYPE,
    SECOND_STAGE,
    TOP_K,
    Fusion,
    SearchType,
)
from ragingest.retrieval.assembly import TokenCounter
from ragingest.retrieval.filters import Where


class RetrievalSettings(BaseModel):
    """What to search for and how: the ranking, the passages and the context budget."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    k: int = Field(
        default=TOP_K,
        description="passages returned (invoke(q, k=N): for one call)",
    )
    parents: bool | None = Field(
        default=None,
        description=(
            "return each chunk's heading section (default: yes, but under a budget the chunks: "
            "whole sections crowd out other hits)"
        ),
    )
    dedup: bool | None = Field(
        default=None,
        description=(
            "merge overlapping hits and drop repeated text (default: yes, but under a budget "
            "without auto_merge a repeat at another place is kept)"
        ),
    )
    where: Where = Field(
        default=None,
        description=(
            "a metadata filter: {'source': 'a.md'} (several keys: all of them), Chroma's syntax "
            "({'price': {'$lte': 5}}, $and/$or) or ['source=a.md', 'price<=5']"
        ),
    )
    search_type: SearchType = Field(
        default=SEARCH_TYPE,
        description="'similarity' or 'mmr'",
    )
    fetch_k: int | None = Field(
        default=None,
        description=(
            "the first candidate pool, grown until k passages remain (default: "
            "search.candidate_depth(k))"
        ),
    )
    lambda_mult: float = Field(
        default=LAMBDA_MULT,
        description="mmr: 1 relevance only, 0 diversity only",
    )
    hybrid: bool = Field(
        default=HYBRID,
        description="fuse BM25 with the dense ranking",
    )
    fusion: Fusion = Field(
        default=FUSION,
        description="'dbsf' (scores scaled by their distribution) or 'rrf' (ranks)",
    )
    dense_weight: float = Field(
        default=DENSE_WEIGHT,
        description="dbsf: the dense list's share of the fused score",
    )
    max_context_tokens: int | None = Field(
        default=None,
        description="keep the best passages whole within this many tokens (of tokenizer)",
    )
    auto_merge: float | None = Field(
        default=None,
        description="return a parent section when at least this share of its chunks are hits",
    )
    tokenizer: str | TokenCounter | None = Field(
        default=None,
        description=(
            "the generator's tokenizer for the budget: a tokenizer.json, a folder, "
            "'tiktoken:NAME', a callable (default: the embedding model's)"
        ),
    )
    join_neighbours: bool = Field(
        default=JOIN_NEIGHBOURS,
        description="under a budget, join hits that meet in one section",
    )
    second_stage: str | BaseDocumentCompressor | None = Field(
        default=SECOND_STAGE,
        description="under a budget, a stage over the candidates before it: 'sentences' (the "
        "units of the matched sections closest to the query, embedded at query time), "
        "'neighbours' (the best passage's neighbours first: retrieval.focus), 'next-section' "
        "(the next section's opening the query points at), names joined by '+', or any "
        "LangChain BaseDocumentCompressor (a CrossEncoderReranker)",
    )
