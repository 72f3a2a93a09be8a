"""The store seam: what retrieval reads from a stored collection, typed, whatever the store.

Contract of a ``ChunkSource`` (``collection.Collection`` over any ``port.DenseIndex``, and
``access.guarded.GuardedSource`` over any source; ``tests/vectorstore/test_store_contract.py``
holds each to it):

- rows are ``StoredChunk``s (the chunk id, stored text or None when stored without one,
  metadata), never a store's own result dicts;
- every read takes one ``where`` (a ``Filter``, None: every chunk) and returns only chunks it
  admits: ``nearest`` and ``nearest_chunks`` (dense top ``n`` by cosine distance, nearest
  first), ``chunks`` (by id and/or filter), ``held`` (which ids are there), ``chunk_ids``. A
  parent section is reached only through a chunk a filtered read returned, so a filter that
  hides a chunk hides its parent from retrieval too;
- ``vectors(ids, where)`` gives the stored embeddings (for MMR) of the ids ``where`` admits,
  ``embed_query`` the query's vector, ``access_policy`` whether the collection was written
  under an access policy (``access``: its reads are wrapped by ``guarded.GuardedSource``),
  ``count`` the number of chunks, ``lexical`` the BM25 index (or None), ``gate`` the read gate
  (or None), ``parent_store`` the parent sections (or None), ``remote`` whether each call is a
  network round trip.

Not reads, so not members: the upkeep of a collection (``lexical_in_step``, ``sync_lexical``:
``Collection``'s) and the performance hint ``ReadHints.chunks_with_dense`` (whether a ranking
should have the dense search bring its chunks: a server, where that saves a round trip; not
where reads go ids first), read through ``chunks_with_dense(source)``, False for a source
without it.

A ``ChunkSink`` is the write side the pipeline's writer uses: ``add_documents`` (ids from the
documents or their content hash, ``vectors`` precomputed where given, ``parent_texts`` to the
parent store), ``delete`` and ``set_access`` (a document's readers, ``schema.ACCESS_KEY``,
replaced in place on the given chunks and their parent sections: nothing is embedded again).

``Filter`` is the neutral filter: ``Condition`` (one key, one operator of ``OPERATORS``, one
value), ``AllOf`` and ``AnyOf``. ``parse_filter`` reads the dict syntax users write (Chroma's
and LangChain's: ``{"k": v}``, ``{"k": {"$lte": 5}}``, ``$and``/``$or``) and refuses an
operator that does not test a ``schema.SCHEMA`` key's type (``$contains`` on ``source``), which
a store would answer with no chunks instead of an error; each store translates a ``Filter`` in
one place (Chroma: ``chroma.index.to_chroma``); ``matches`` is its exact meaning over one chunk's
metadata.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from langchain_core.documents import Document

from ragingest.schema import SCHEMA

if TYPE_CHECKING:
    from ragingest.vectorstore.gate import ReadGate

Scalar = str | int | float | bool
OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$contains")


@dataclass(frozen=True)
class StoredChunk:
    """One stored chunk: its id, its text (None: stored without text) and its metadata."""

    id: str
    text: str | None
    metadata: dict[str, Any] = field(default_factory=dict)

    def document(self) -> Document:
        """As a LangChain ``Document`` (id = the chunk id, no text = "")."""
        return Document(page_content=self.text or "", metadata=dict(self.metadata), id=self.id)


@dataclass(frozen=True)
class Condition:
    """``metadata[key] <op> value``; ``$in``/``$nin`` take a tuple of values; ``$contains``
    holds when the stored value is a list with ``value`` in it."""

    key: str
    op: str
    value: Scalar | tuple[Scalar, ...]


@dataclass(frozen=True)
class AllOf:
    """Every part holds."""

    parts: tuple[Filter, ...]


@dataclass(frozen=True)
class AnyOf:
    """At least one part holds."""

    parts: tuple[Filter, ...]


Filter = Condition | AllOf | AnyOf


def parse_filter(where: Mapping[str, Any] | Filter | None) -> Filter | None:
    """The user's dict syntax (module docstring) as a ``Filter``; None or ``{}``: no filter.
    Raises ``ValueError`` naming what it can't read."""
    if where is None or isinstance(where, Condition | AllOf | AnyOf):
        return where
    if not where:
        return None
    if not isinstance(where, Mapping):
        raise TypeError(f"a filter is a dict, not {where!r}")
    parts: list[Filter] = []
    for key, value in where.items():
        if key in ("$and", "$or"):
            if not isinstance(value, list | tuple) or not value:
                raise ValueError(f"bad filter {dict(where)!r}: {key} takes a non-empty list")
            found = tuple(f for f in (parse_filter(v) for v in value) if f is not None)
            parts.append(AllOf(found) if key == "$and" else AnyOf(found))
        elif key.startswith("$"):
            raise ValueError(f"bad filter {dict(where)!r}: unknown operator {key}")
        elif isinstance(value, Mapping):
            for op, operand in value.items():
                parts.append(_condition(key, op, operand))
        else:
            parts.append(_condition(key, "$eq", value))
    return parts[0] if len(parts) == 1 else AllOf(tuple(parts))


def _condition(key: str, op: str, value: Any) -> Condition:
    if op not in OPERATORS:
        raise ValueError(f"bad filter on {key!r}: unknown operator {op!r} (known: {OPERATORS})")
    if key in SCHEMA:
        _check_field_type(key, op, SCHEMA[key].type)
    if op in ("$in", "$nin"):
        if not isinstance(value, list | tuple):
            raise ValueError(f"bad filter on {key!r}: {op} takes a list")
        return Condition(key, op, tuple(value))
    return Condition(key, op, value)


_ORDER = ("$gt", "$gte", "$lt", "$lte")


def _check_field_type(key: str, op: str, stored: type) -> None:
    """``ValueError`` for an operator that does not test a ``SCHEMA`` key's stored type (Chroma
    answers such a filter with no chunks, or with every chunk for ``$ne``/``$nin`` on a list,
    never with an error): anything but ``$contains`` on a list, ``$contains`` on one value, an
    order comparison on a string or a bool. Keys outside ``SCHEMA`` (front matter, catalogue
    columns) have no declared type and are not checked."""
    if stored is list and op != "$contains":
        problem = f"it holds a list, which {op} does not test item by item"
        hint = f"match an item with {{{key!r}: {{'$contains': item}}}}"
    elif stored is not list and op == "$contains":
        problem = f"it holds one {stored.__name__} value and $contains tests a list's items"
        hint = "use $eq (or $in for several values)"
    elif op in _ORDER and stored not in (int, float):
        problem = f"it holds a {stored.__name__} and {op} compares numbers"
        hint = "use $eq, $ne, $in or $nin"
    else:
        return
    raise ValueError(f"bad filter on {key!r}: {problem}: {hint}")


def matches(where: Filter | None, metadata: Mapping[str, Any]) -> bool:
    """Whether a chunk with ``metadata`` passes ``where``. A missing key passes only ``$ne``
    and ``$nin``; ``$contains`` holds on a stored list only; an order comparison holds
    between numbers only."""
    if where is None:
        return True
    if isinstance(where, AllOf):
        return all(matches(part, metadata) for part in where.parts)
    if isinstance(where, AnyOf):
        return any(matches(part, metadata) for part in where.parts)
    present = where.key in metadata
    value = metadata.get(where.key)
    if where.op == "$eq":
        return present and _same(value, where.value)
    if where.op == "$ne":
        return not (present and _same(value, where.value))
    if where.op == "$contains":
        return present and isinstance(value, list) and any(_same(v, where.value) for v in value)
    if where.op in ("$in", "$nin"):
        inside = present and any(_same(value, v) for v in where.value)  # type: ignore[union-attr]
        return inside if where.op == "$in" else not inside
    if not present or not _number(value) or not _number(where.value):
        return False
    if where.op == "$gt":
        return bool(value > where.value)  # type: ignore[operator]
    if where.op == "$gte":
        return bool(value >= where.value)  # type: ignore[operator]
    if where.op == "$lt":
        return bool(value < where.value)  # type: ignore[operator]
    return bool(value <= where.value)  # type: ignore[operator]


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _same(a: Any, b: Any) -> bool:
    """Equal and of one kind: a bool is not the number 1."""
    return isinstance(a, bool) == isinstance(b, bool) and a == b


@runtime_checkable
class LexicalSearch(Protocol):
    """The BM25 index as retrieval reads it (``lexical.LexicalIndex``, ``PgLexicalIndex``)."""

    def search(self, query: str, limit: int, offset: int = 0) -> list[tuple[str, float]]: ...

    def count(self) -> int: ...


@runtime_checkable
class ParentSource(Protocol):
    """The parent sections as retrieval reads them (``parents.ParentStore``)."""

    def mget(self, keys: Sequence[str]) -> list[Document | None]: ...


@runtime_checkable
class ChunkSource(Protocol):
    """What retrieval reads from a stored collection (module docstring)."""

    @property
    def lexical(self) -> LexicalSearch | None: ...

    @property
    def gate(self) -> ReadGate | None: ...

    @property
    def parent_store(self) -> ParentSource | None: ...

    @property
    def remote(self) -> bool: ...

    def embed_query(self, text: str) -> list[float]: ...

    def count(self) -> int: ...

    def nearest(
        self, vector: Sequence[float], n: int, where: Filter | None = None
    ) -> list[tuple[str, float]]: ...

    def nearest_chunks(
        self, vector: Sequence[float], n: int, where: Filter | None = None
    ) -> list[tuple[StoredChunk, float]]: ...

    def chunks(
        self, ids: Sequence[str] | None = None, where: Filter | None = None
    ) -> list[StoredChunk]: ...

    def held(self, ids: Sequence[str], where: Filter | None = None) -> set[str]: ...

    def chunk_ids(self, where: Filter | None = None) -> list[str]: ...

    def vectors(
        self, ids: Sequence[str], where: Filter | None = None
    ) -> dict[str, list[float]]: ...

    def access_policy(self) -> bool: ...


@runtime_checkable
class ReadHints(Protocol):
    """A source's hint to a ranking (module docstring)."""

    @property
    def chunks_with_dense(self) -> bool: ...


def chunks_with_dense(source: object) -> bool:
    """Whether a ranking over ``source`` should have the dense search bring its chunks (its
    ``ReadHints``; False without them)."""
    return isinstance(source, ReadHints) and bool(source.chunks_with_dense)


@runtime_checkable
class ChunkSink(Protocol):
    """What the writer writes (module docstring)."""

    def add_documents(
        self,
        documents: list[Document],
        *,
        embed_texts: Sequence[str] | None = None,
        parent_texts: Sequence[str] | None = None,
        vectors: Sequence[list[float] | None] | None = None,
        **kwargs: Any,
    ) -> list[str]: ...

    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> None: ...

    def set_access(self, ids: Sequence[str], access: Sequence[str]) -> None: ...
