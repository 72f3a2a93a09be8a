"""``open_guarded``: a collection opened for a reader, in one sequence (the retriever, the
query's repair path and ``trace`` share it): open it read-only, bring its lexical index in
step with Chroma where a hybrid search reads it, and put every read behind the guard."""

from __future__ import annotations

from pathlib import Path

from ragingest.vectorstore.access.guarded import GuardedSource
from ragingest.vectorstore.access.principals import Access
from ragingest.vectorstore.chroma.server import ChromaServer
from ragingest.vectorstore.gate import reading


def open_guarded(
    persist_dir: str | Path | None,
    collection: str,
    principals: Access,
    *,
    hybrid: bool,
    model: str | None = None,
    records_url: str | None = None,
    server: ChromaServer | None = None,
) -> GuardedSource:
    """``collection`` opened read-only (``open_store(create=False)``: the same refusals: no
    store, no collection, another model), its lexical index repaired when ``hybrid`` and it
    is not in step with Chroma (built before the lexical index existed, or a write cut
    short), read only as ``principals`` (``GuardedSource``: ``PrincipalsRequiredError`` for
    none on a collection with an access policy). The opened store is the guard's ``inner``."""
    from ragingest.vectorstore.chroma.store import open_store

    store = open_store(
        persist_dir, collection, model=model, create=False, records_url=records_url,
        server=server,
    )  # fmt: skip
    with reading(store):  # counts apart only between a writer's steps: not while it waits
        if hybrid and not store.lexical_in_step():
            store.sync_lexical()
    return GuardedSource(store, principals)
