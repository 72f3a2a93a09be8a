"""Configurations of ``ragingest evaluate``: one way to cut the corpus each, parsed from
``--config`` specs and ``--sweep`` grids; the default and the plain-splitter baselines."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

STRATEGIES = ("heading", "semantic", "recursive", "fixed", "semchunk", "chonkie", "llamaindex")
# the baselines of the ``bench`` extra (scripts/setup.sh installs it, scripts/demo.sh does not)
BENCH_MODULES = {"semchunk": "semchunk", "chonkie": "chonkie", "llamaindex": "llama_index.core"}
RETRIEVALS = ("chunks", "dedup", "parents")
BOOLEAN = {"on": True, "off": False, "true": True, "false": False, "1": True, "0": False}


@dataclass(frozen=True)
class Config:
    """One way to cut the corpus. ``None`` means the splitter's default."""

    strategy: str = "heading"
    chunk_size: int | None = None
    chunk_overlap: int | None = None
    min_chunk_size: int | None = None
    context_prefix: bool = True
    retrieval: str = "chunks"  # chunks: plain top k | dedup | parents (the retriever's modes)
    parent_chunk_size: int | None = None
    label: str = ""

    @property
    def name(self) -> str:
        """The configuration's name in tables: its label, else the strategy and the settings that
        differ from the defaults."""
        if self.label:
            return self.label
        parts = [self.strategy]
        if self.chunk_size is not None:
            parts.append(f"size={self.chunk_size}")
        if self.chunk_overlap is not None:
            parts.append(f"overlap={self.chunk_overlap}")
        if self.strategy in ("heading", "semantic"):
            if self.min_chunk_size is not None:
                parts.append(f"min={self.min_chunk_size}")
            if not self.context_prefix:
                parts.append("prefix=off")
            if self.parent_chunk_size is not None:
                parts.append(f"parent={self.parent_chunk_size}")
        if self.retrieval != "chunks":
            parts.append(f"retrieval={self.retrieval}")
        return " ".join(parts)

    def normalized(self) -> Config:
        """Settings a strategy ignores are dropped, so a grid has no duplicate rows."""
        if self.strategy not in ("heading", "semantic"):
            return replace(self, min_chunk_size=None, context_prefix=True, parent_chunk_size=None)
        return self


DEFAULT = Config(label="default")

_AXES: dict[str, Callable[[str], Any]] = {
    "strategy": str,
    "chunk_size": int,
    "chunk_overlap": int,
    "min_chunk_size": int,
    "context_prefix": lambda v: BOOLEAN[v.lower()],
    "retrieval": str,
    "parent_chunk_size": int,
}
_ALIASES = {"size": "chunk_size", "overlap": "chunk_overlap", "min": "min_chunk_size"}
_ALIASES |= {
    "min_size": "min_chunk_size",
    "prefix": "context_prefix",
    "parent": "parent_chunk_size",
}


def parse_sweep(axes: Sequence[str]) -> list[Config]:
    """``["strategy=heading,recursive", "chunk_size=128,256", "prefix=on,off"]`` → the grid."""
    grid: dict[str, list[Any]] = {}
    for axis in axes:
        key, sep, values = axis.partition("=")
        key = _ALIASES.get(key.strip(), key.strip()).replace("-", "_")
        if not sep or key not in _AXES:
            raise ValueError(f"bad sweep axis {axis!r}: use one of {', '.join(_AXES)}=v1,v2")
        try:
            grid[key] = [_AXES[key](v.strip()) for v in values.split(",") if v.strip()]
        except (KeyError, ValueError) as exc:
            raise ValueError(f"bad value in sweep axis {axis!r}") from exc
        if key == "strategy" and (bad := set(grid[key]) - set(STRATEGIES)):
            raise ValueError(f"unknown strategy {sorted(bad)}: use {', '.join(STRATEGIES)}")
        if key == "retrieval" and (bad := set(grid[key]) - set(RETRIEVALS)):
            raise ValueError(f"unknown retrieval {sorted(bad)}: use {', '.join(RETRIEVALS)}")
    keys = list(grid)
    configs: list[Config] = []
    for combination in itertools.product(*(grid[k] for k in keys)):
        config = Config(**dict(zip(keys, combination, strict=True))).normalized()
        if config not in configs:
            configs.append(config)
    return configs


def parse_config(spec: str) -> Config:
    """``"heading:size=128,overlap=0,min=32,prefix=off"`` → one ``Config``."""
    strategy, _, rest = spec.partition(":")
    values: dict[str, Any] = {"strategy": strategy.strip()}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, sep, value = item.partition("=")
        key = _ALIASES.get(key.strip(), key.strip()).replace("-", "_")
        if not sep or key not in _AXES or key == "strategy":
            raise ValueError(f"bad setting {item!r} in {spec!r}")
        values[key] = _AXES[key](value.strip())
    if values["strategy"] not in STRATEGIES:
        raise ValueError(f"unknown strategy in {spec!r}: use {', '.join(STRATEGIES)}")
    if values.get("retrieval", "chunks") not in RETRIEVALS:
        raise ValueError(f"unknown retrieval in {spec!r}: use {', '.join(RETRIEVALS)}")
    return Config(**values).normalized()


def baseline_config(size: int, matched: bool = False, strategy: str = "recursive") -> Config:
    """A plain splitter at ``size`` tokens, no overlap, labelled as a baseline."""
    note = " (mean size matched)" if matched else ""
    title = {
        "recursive": "LangChain recursive",
        "semchunk": "semchunk",
        "chonkie": "Chonkie",
        "llamaindex": "LlamaIndex SentenceSplitter",
    }
    overlap = "/0" if strategy == "recursive" else ""
    label = f"baseline: {title[strategy]} {size}{overlap}{note}"
    return Config(strategy, size, 0 if strategy == "recursive" else None, label=label)


def baselines_installed() -> tuple[str, ...]:
    """The baseline strategies whose library is importable (semchunk, Chonkie and
    llama-index-core come with the ``bench`` extra; LangChain's splitter is a dependency)."""
    found = ["recursive"]
    found += [name for name, module in BENCH_MODULES.items() if _importable(module)]
    return tuple(found)


def _importable(module: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a dotted name whose parent package is absent
        return False


def configurations(
    default_size: int,
    sweep: Sequence[str] = (),
    extra: Sequence[str] = (),
    baseline_size: int | None = None,
) -> list[Config]:
    """The default, the baselines (LangChain recursive, semchunk, Chonkie where installed) at
    the default's chunk size (or ``baseline_size``), then ``extra`` and the ``sweep`` grid."""
    size = baseline_size or default_size
    configs = [DEFAULT, *(baseline_config(size, strategy=s) for s in baselines_installed())]
    asked = [*(parse_config(s) for s in extra), *parse_sweep(sweep)]
    installed = baselines_installed()
    if missing := sorted({c.strategy for c in asked} & set(BENCH_MODULES) - set(installed)):
        raise ValueError(
            f"strategy {', '.join(missing)} needs the `bench` extra, which is not installed: "
            "run `bash scripts/setup.sh` (all of requirements.lock)"
        )
    for config in asked:
        same = replace(config, label="") in {replace(c, label="") for c in configs}
        if not same:
            configs.append(config)
    return configs
