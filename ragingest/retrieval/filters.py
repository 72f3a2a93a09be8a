"""Metadata filters: what a user writes -> one Chroma ``where``.

Contract of ``chroma_where(where)``:

- ``None``, ``{}`` and ``[]`` -> ``None`` (no filter);
- a list of CLI conditions (``["source=a.md", "price<=5000"]``; operators ``= == != < <= > >=``)
  -> each ``{key: {"$op": value}}``, several joined by ``$and``. A value reads as ``true``/
  ``false`` -> bool, a decimal number -> int/float (one beyond what Chroma stores exactly
  keeps its digits as a string, as ingest stored it: ``schema.exact_number``), else a string;
  in double or single quotes (``flag="true"``, ``code='007'``) it is always the string inside.
  ``< <= > >=`` need a number; NaN and infinity are refused (``ValueError``: a usage error);
- a dict in Chroma's own syntax (``{"$and": [...]}``, ``{"price": {"$lte": 5000}}``) is kept;
- a dict of several keys (``{"source": "a.md", "lang": "ru"}``: LangChain users' habit, which
  Chroma refuses with "exactly one operator") -> ``$and`` of one clause per key.

``as_filter(where)`` is the same as the store seam's neutral ``Filter`` (``vectorstore.seam``),
what every read of a store takes; a ``Filter`` passes through.
"""

from __future__ import annotations

import re
from typing import Any

from ragingest.schema import exact_number
from ragingest.vectorstore.seam import Filter, parse_filter

Where = dict[str, Any] | list[str] | None

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


_QUOTED = re.compile(r"""^(?:"(.*)"|'(.*)')$""", re.DOTALL)
_EQUAL = ("=", "==", "!=")
_NOT_FINITE = re.compile(r"^[-+]?(?:nan|inf|infinity)$", re.IGNORECASE)


def _scalar(text: str, condition: str, op: str) -> str | int | float | bool:
    """The value of one CLI condition (module docstring); ``ValueError`` naming it when it
    can't be compared."""
    quoted = _QUOTED.match(text)
    if quoted:
        value: str | int | float | bool = next(g for g in quoted.groups() if g is not None)
    elif text.lower() in ("true", "false"):
        value = text.lower() == "true"
    elif _NOT_FINITE.match(text):
        key = condition.split(op, 1)[0].strip()
        hint = f'; to match the text {text!r}, quote it: {key}{op}"{text}"' if op in _EQUAL else ""
        raise ValueError(f"bad --where {condition!r}: {text} is no number a filter compares{hint}")
    else:
        number = exact_number(text)
        value = text if number is None else number
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    if op not in _EQUAL and not numeric:
        raise ValueError(
            f"bad --where {condition!r}: {op} needs a number Chroma stores exactly, got {text!r}"
        )
    return value


def parse_where(conditions: list[str]) -> dict[str, Any] | None:
    """``["source=a.md", "price<=5000"]`` -> a Chroma ``where`` filter (``$and`` of them)."""
    clauses = []
    for condition in conditions:
        match = _CONDITION.match(condition)
        if not match:
            raise ValueError(f"bad --where {condition!r}: use key=value, key<=number, ...")
        key, op, value = match.groups()
        clauses.append({key: {_OPERATORS[op]: _scalar(value, condition, op)}})
    return _join(clauses)


def chroma_where(where: Where) -> dict[str, Any] | None:
    """Any accepted form of ``where`` (see the module docstring) as one Chroma filter."""
    if not where:
        return None
    if isinstance(where, str):
        return parse_where([where])
    if isinstance(where, list | tuple):
        return parse_where([str(c) for c in where])
    if not isinstance(where, dict):
        raise TypeError(f"where must be a dict or a list of 'key=value' strings, not {where!r}")
    if len(where) == 1:
        return dict(where)
    if any(key.startswith("$") for key in where):
        raise ValueError(f"bad where {where!r}: an operator like $and must be its only key")
    return _join([{key: value} for key, value in where.items()])


def _join(clauses: list[dict[str, Any]]) -> dict[str, Any] | None:
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


def as_filter(where: Where | Filter) -> Filter | None:
    """Any accepted form of ``where`` (or a ``Filter``) as the store seam's ``Filter``."""
    if isinstance(where, dict | list | tuple | str) or where is None:
        return parse_filter(chroma_where(where))
    return parse_filter(where)
