"""Search a collection: the CLI's ``query`` and the Python entry point for apps."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ragingest.vectorstore.store import open_store

_CONDITION = re.compile(r"^\s*([\w.-]+)\s*(<=|>=|!=|==|=|<|>)\s*(.*?)\s*$")
_OPERATORS = {
    "=": "$eq",
    "==": "$eq",
    "!=": "$ne",
    "<": "$lt",
    "<=": "$lte",
    ">": "$gt",
    ">=": "$gte",
}


def _scalar(text: str) -> str | int | float | bool:
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def parse_where(conditions: list[str]) -> dict[str, Any] | None:
    """``["source=a.md", "price<=5000"]`` → a Chroma ``where`` filter (``$and`` of them)."""
    clauses = []
    for condition in conditions:
        match = _CONDITION.match(condition)
        if not match:
            raise ValueError(f"bad --where {condition!r}: use key=value, key<=number, ...")
        key, op, value = match.groups()
        clauses.append({key: {_OPERATORS[op]: _scalar(value)}})
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


def search(
    text: str,
    persist_dir: str | Path,
    collection: str,
    k: int = 4,
    where: list[str] | None = None,
    model: str | None = None,
    records_url: str | None = None,
) -> list[dict[str, Any]]:
    """Top ``k`` chunks as ``{"text", "score", "metadata"}``, best first (score = cosine).
    ``records_url``: the records database that resolves the name (see ``open_store``)."""
    store = open_store(persist_dir, collection, model=model, create=False, records_url=records_url)
    hits = store.similarity_search_with_relevance_scores(text, k=k, filter=parse_where(where or []))
    return [
        {"text": doc.page_content, "score": round(float(score), 4), "metadata": doc.metadata}
        for doc, score in hits
    ]
