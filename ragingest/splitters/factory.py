"""The one place a splitter is built: split settings + a content type (+ the model's tokenizer
and input limit) → a splitter. ``ingest``, ``inspect``, the Ray workers and ``evaluate`` all
call ``build_splitter``, so a setting means the same cut everywhere.

Strategies: ``heading`` (heading-first, the product), ``semantic`` (heading-first with
topic-shift boundaries as the fallback for text without structure), ``fixed`` (fixed windows),
``recursive`` (LangChain's ``RecursiveCharacterTextSplitter`` baseline, same unit). Content-type
routing (``content_types.splitter_for``) applies to the heading-first strategies; a fixed or
recursive splitter cuts every content type the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, cast

from ragingest.defaults import (
    CHUNK_SIZE,
    MIN_CHUNK_SIZE,
    SPLIT_LEVELS,
    STRATEGIES,
    STRATEGY,
    UNIT,
)
from ragingest.splitters.base import ChunkSplitter
from ragingest.splitters.content_types import splitter_for
from ragingest.splitters.heading_first import HeadingFirstSplitter
from ragingest.splitters.measure import UNITS, Unit, capped_size

if TYPE_CHECKING:  # the model layer is imported on first use: ``ragingest --help`` stays fast
    from ragingest.models.resolve import ModelInfo
    from ragingest.splitters.semantic import Embed


@dataclass(kw_only=True)
class SplitSettings:
    """Everything that decides chunk boundaries; ``recorded()`` is kept in the collection.
    These fields are also keyword arguments of ``ragingest.ingest`` (``pipeline.api``)."""

    chunk_size: int | None = None  # None: CHUNK_SIZE, capped at the model's limit
    chunk_overlap: int | None = None  # None: the strategy's default
    min_chunk_size: int = MIN_CHUNK_SIZE
    unit: str = UNIT
    context_prefix: bool = True
    split_levels: Sequence[int] = SPLIT_LEVELS  # any sequence in; kept as a tuple
    strategy: str = STRATEGY
    parent_chunk_size: int | None = None  # None: the heading-first default

    def __post_init__(self) -> None:
        self.split_levels = tuple(self.split_levels)
        if self.strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {STRATEGIES}, got {self.strategy!r}")
        if self.unit not in UNITS:
            raise ValueError(f"unit must be one of {UNITS}, got {self.unit!r}")

    def recorded(self) -> dict[str, Any]:
        """The settings as recorded in a collection. The two later fields appear only when
        they differ from their defaults, so collections built before them still match."""
        data = asdict(self)
        data["split_levels"] = list(self.split_levels)
        if self.strategy == "heading":
            del data["strategy"]
        if self.parent_chunk_size is None:
            del data["parent_chunk_size"]
        return data

    @classmethod
    def from_recorded(cls, data: dict[str, Any]) -> SplitSettings:
        return cls(**data)


def check_sizes(settings: SplitSettings, max_embed_tokens: int | None = None) -> None:
    """``ValueError`` naming the setting when a size is not a whole number in range or the
    overlap is not under the chunk size (capped at ``max_embed_tokens``, the model's limit, in
    tokens); a run calls it before it records the settings in a collection."""
    lowest = {"chunk_size": 1, "chunk_overlap": 0, "parent_chunk_size": 1, "min_chunk_size": 0}
    for name, low in lowest.items():
        value = getattr(settings, name)
        if value is None and name != "min_chunk_size":
            continue
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise ValueError(f"{name} must be a whole number >= {low}, got {value!r}")
    size = capped_size(settings.chunk_size or CHUNK_SIZE, settings.unit, max_embed_tokens)
    if settings.chunk_overlap is not None and settings.chunk_overlap >= size:
        raise ValueError(
            f"chunk_overlap {settings.chunk_overlap} must be under chunk_size {size}"
            + ("" if settings.chunk_size == size else " (the default, or the model's limit)")
        )
    parent = settings.parent_chunk_size
    if parent is not None and parent < size:
        raise ValueError(f"parent_chunk_size {parent} is under chunk_size {size}")
    levels = settings.split_levels
    if not all(isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= 6 for n in levels):
        raise ValueError(f"split_levels must be heading levels 1-6, got {levels!r}")


def base_splitter(
    settings: SplitSettings,
    *,
    info: ModelInfo | None = None,
    model: str | None = None,
    embedder: Embed | None = None,
) -> ChunkSplitter:
    """The splitter of ``settings`` for ``document`` content. ``info``: the model's
    ``ModelInfo`` (tokenizer, input limit; loaded from ``model`` when the unit is tokens and
    none is given); ``embedder``: sentence vectors for the semantic fallback (default: the
    model's)."""
    if info is None and settings.unit == "tokens":
        from ragingest.models.resolve import load_model_info

        info = load_model_info(model)
    unit = cast(Unit, settings.unit)  # one of UNITS: checked in __post_init__
    tokenizer = info.splitter_tokenizer if info is not None else None
    max_embed = info.max_embed_tokens if info is not None else None
    if settings.strategy in ("fixed", "recursive"):
        from ragingest.splitters import FixedSizeSplitter
        from ragingest.splitters.recursive import RecursiveBaseline

        size = capped_size(settings.chunk_size or CHUNK_SIZE, settings.unit, max_embed)
        overlap = settings.chunk_overlap or 0
        if settings.strategy == "recursive":
            wrapper = info.tokenizer if info is not None else None  # LangChain's needs it
            return RecursiveBaseline(size, overlap, settings.unit, wrapper)
        return FixedSizeSplitter(size, overlap, unit, tokenizer=tokenizer)
    fallback: Any = None
    if settings.strategy == "semantic":
        from ragingest.splitters.semantic import SemanticBoundaries

        name = model or (info.name if info is not None else None)
        fallback = SemanticBoundaries(embedder) if embedder else SemanticBoundaries.from_model(name)
    return HeadingFirstSplitter(
        settings.chunk_size,
        settings.chunk_overlap,
        settings.min_chunk_size,
        unit=unit,
        tokenizer=tokenizer,
        max_embed_tokens=max_embed,
        model=model or (info.name if info is not None else None),
        split_levels=settings.split_levels,
        context_prefix=settings.context_prefix,
        fallback=fallback,
        parent_chunk_size=settings.parent_chunk_size,
    )


def build_splitter(
    settings: SplitSettings,
    content_type: str = "document",
    *,
    info: ModelInfo | None = None,
    model: str | None = None,
    embedder: Embed | None = None,
    base: ChunkSplitter | None = None,
) -> ChunkSplitter:
    """The splitter for one content type (``splitters.content_types``). ``base``: a splitter
    ``base_splitter`` already built for these settings (a run builds it once and routes each
    document's content type onto it)."""
    if base is None:
        base = base_splitter(settings, info=info, model=model, embedder=embedder)
    if settings.strategy in ("fixed", "recursive"):
        return base
    return splitter_for(content_type, base)
