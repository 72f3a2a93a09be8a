"""``open_guarded``: a collection opened for a reader, in one sequence (the retriever, the
query's repair path and ``trace`` share it): open it read-only, bring its lexical index in
step with the dense index where a hybrid search reads it, and put every read behind the
guard. ``guard_collection`` is the last two steps, for a collection the caller opened."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragingest.vectorstore.access.guarded import GuardedSource, guarded
from ragingest.vectorstore.access.principals import Access
from ragingest.vectorstore.collection_reads import CollectionReads
from ragingest.vectorstore.gate import reading
from ragingest.vectorstore.seam import ChunkSource


def guard_collection(source: ChunkSource, principals: Access, *, hybrid: bool) -> GuardedSource:
    """``source`` read only as ``principals`` (``GuardedSource``: ``PrincipalsRequiredError``
    for none on a collection with an access policy), its lexical index first brought in step
    when ``hybrid`` and the source can repair it (a ``Collection`` opened for writing: one
    built before the lexical index existed, or a write cut short). A ``Collection`` opened
    for principals is refused (``ValueError``): its reads are guarded already, and a
    retriever's principals (per call too) are given to the retriever."""
    if isinstance(source, CollectionReads) and source.principals is not None:
        raise ValueError(
            "give the retriever a collection opened without principals "
            "(open_store(..., principals=None)) and the principals to the retriever"
        )
    repair = getattr(source, "sync_lexical", None)
    in_step = getattr(source, "lexical_in_step", None)
    if hybrid and repair is not None and in_step is not None:
        with reading(source):  # counts apart only between a writer's steps: not while it waits
            if not in_step():
                repair()
    return guarded(source, principals)


def open_guarded(
    persist_dir: str | Path | None,
    collection: str,
    principals: Access,
    *,
    hybrid: bool,
    model: str | None = None,
    records_url: str | None = None,
    server: Any = None,
    backend: Any = None,
    copy_if_read_only: bool = False,
) -> GuardedSource:
    """``collection`` opened read-only (``open_store(create=False)``: the same refusals: no
    store, no collection, another model), then ``guard_collection``. ``server``/``backend``:
    as ``open_store`` takes them; ``copy_if_read_only``: a store that can't be written is
    read from a temporary copy. The opened collection is the guard's ``inner``."""
    from ragingest.vectorstore.opening import open_store

    store = open_store(
        persist_dir, collection, model=model, create=False, records_url=records_url,
        server=server, backend=backend, copy_if_read_only=copy_if_read_only,
    )  # fmt: skip
    return guard_collection(store, principals, hybrid=hybrid)
