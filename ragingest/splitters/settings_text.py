"""Recorded splitter settings as a user reads them: a setting left at its default shows the
value in force (``chunk_size=200 (default)``), never ``None``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def effective_setting(key: str, value: object, settings: Mapping[str, Any] | None = None) -> str:
    """``value`` of splitter setting ``key`` as text; ``None`` → the default the splitter uses
    (the chunk size is also capped at the model's input limit, as every run logs)."""
    from ragingest.defaults import CHUNK_SIZE, default_overlap

    if value is not None:
        return str(value)
    if key == "chunk_size":
        return f"{CHUNK_SIZE} (default)"
    if key == "chunk_overlap":
        size = (settings or {}).get("chunk_size") or CHUNK_SIZE
        return f"{default_overlap(size)} (default)"
    return "default"


def describe(settings: Mapping[str, object]) -> str:
    """``chunk_size=200 (default), chunk_overlap=0 (default), ...`` sorted by key."""
    return ", ".join(
        f"{k}={effective_setting(k, v, settings)}" for k, v in sorted(settings.items())
    )
