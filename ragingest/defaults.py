"""The defaults and names the Python API and the command line share: one home each.

Bottom layer, imports nothing of ours and nothing heavy, so ``ragingest --help`` reads it
without loading a model, Chroma or LangChain. ``SplitSettings``, ``HeadingFirstSplitter``,
``IngestOptions``, the loaders' bounds, ``retrieval.settings.RetrievalSettings`` (and so
``HeadingFirstRetriever`` and ``ragingest.retriever``), ``retrieval.query.search``,
``evaluate`` and ``trace`` take their defaults and choices from here, and ``cli.args`` states
these same values in ``--help`` (tests/cli/test_help_defaults.py holds them equal).
"""

from __future__ import annotations

from typing import Literal, get_args

MODEL = "intfloat/multilingual-e5-small"  # the embedding model of a new collection

# Splitting. Tuned with `ragingest evaluate` (bench/README.md, "Retrieval quality"): against
# 1000-token chunks with 15 % overlap, 200 tokens without overlap retrieve better at k = 5 and
# the ~1000-token section comes back through parent expansion instead.
CHUNK_SIZE = 200  # tokens; capped at the model's limit
MIN_CHUNK_SIZE = 100  # pieces under ~100 tokens say too little alone: merged
OVERLAP_RATIO = 0.0  # overlap filled the top k with near-copies (measured)
SPLIT_LEVELS: tuple[int, ...] = (2, 3)  # headings that start a section: H2 and H3
Unit = Literal["tokens", "chars", "words"]
UNITS: tuple[Unit, ...] = get_args(Unit)
UNIT: Unit = "tokens"
STRATEGIES = ("heading", "semantic", "fixed", "recursive")  # SplitSettings.strategy
STRATEGY = "heading"

# One ingest run.
ENGINES = ("local", "ray")  # IngestOptions.engine
ENGINE = "local"
WRITE_BATCH_SIZE = 256  # chunks per write; whole files, a killed run redoes one batch
# texts per model forward pass (the ONNX backend runs each text alone whatever it says)
EMBED_BATCH_SIZE = 64
MAX_FILE_MB = 32  # larger files are refused: bounded time and memory
FILE_TIMEOUT = 120.0  # seconds per file; a 30 MB page parses in well under this
MAX_CHUNKS_PER_FILE = 20_000  # past it a file fails, named (~10 min of embedding on a CPU)
# scans: how pages without a usable text layer are read (loaders.scans.ocr); OCR counts against
# FILE_TIMEOUT (~1-3 s a page a core): a long scan needs a larger --file-timeout
OCR_MODES = ("never", "auto", "always")  # auto: pages without text or with a garbage layer
OCR_MODE = "auto"
OCR_LANG = "rus+eng"  # Tesseract's language models
OCR_MAX_PAGES = 100  # pages one file may have OCR'd; past it the file fails, named
# a run that would delete more than this share of the recorded sources (or all) is refused
MAX_DELETE_SHARE = 0.5

# Searching a collection.
SearchType = Literal["similarity", "mmr"]
SEARCH_TYPES: tuple[SearchType, ...] = get_args(SearchType)
TOP_K = 4  # passages a query or the retriever returns
SEARCH_TYPE: SearchType = "similarity"
LAMBDA_MULT = 0.5  # mmr: 1 relevance only, 0 diversity only
# candidates each ranking reads at least (search.candidate_depth: max(this, 4 k)); also the
# first pool of a ranking or search told no fetch_k
MIN_CANDIDATES = 20
HYBRID = True  # BM25 fused with the vectors: it measured better on both eval sets
# under a budget, a second stage over the candidates (retrieval.focus: "sentences" of the
# matched sections that answer, "neighbours" of the best passage first, "next-section": the
# next section's opening the query points at). "next-section" won or tied on every tuning
# set, the others lost one (bench/docs/context-stages.md, "The next section's opening")
SECOND_STAGES = ("sentences", "neighbours", "next-section")
SECOND_STAGE: str | None = "next-section"
JOIN_NEIGHBOURS = True  # under a budget, hits that meet in one section become one passage
Fusion = Literal["dbsf", "rrf"]
FUSIONS: tuple[Fusion, ...] = get_args(Fusion)
# how the dense and BM25 lists become one: their scores scaled by each list's distribution
# (dbsf), or reciprocal ranks (rrf)
FUSION: Fusion = "dbsf"  # a higher minimum margin over plain splitters than RRF (bench/README)
DENSE_WEIGHT = 0.5  # distribution-based fusion: the dense list's share of the fused score
# HNSW candidates a query of a new collection explores: at Chroma's 100 a 307-chunk collection
# missed an exact top 5 in 7 of 12 opens (each open builds its graph anew), at 200 in none
# (bench/search_ef.py); x1.36 the query time at 100 000 vectors
SEARCH_EF = 200

# A Chroma server (``--chroma-port``, ``chroma_port=``) and the header its token goes in.
CHROMA_PORT = 8000
TOKEN_HEADER = "Authorization"

# Evaluation and trace.
EVALUATE_K = 5  # hits per question
EVALUATE_SEARCHES = ("hybrid", "dense")  # the retriever's default first
TRACE_K = 5  # passages in the context a trace checks


def default_overlap(chunk_size: int) -> int:
    """The overlap between pieces of ``chunk_size`` when none is given (``OVERLAP_RATIO``)."""
    return round(chunk_size * OVERLAP_RATIO)
