"""A small collection for the permission tests: 12 documents of 3 chunks each under one parent
section, every chunk's text holding its document's marker word (``mark07zq``), embedded once by
the real model. ``write(store, readers)`` (re)writes it through the store's own write path with
each document's readers; ``readable(readers, caller)`` is what a caller may read."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from ragingest.schema import ACCESS_KEY, PUBLIC_PRINCIPAL

TOPICS = [
    "vacation days are granted after six months of work",
    "salary review happens every spring with the manager",
    "contract renewal needs the legal department signature",
    "a server outage is reported to the on-call engineer",
    "office keys are returned to the front desk",
    "travel expenses are refunded within ten days",
]
QUERIES = [
    "how many vacation days",
    "when is the salary reviewed",
    "who signs a contract renewal",
    "server outage report",
    "mark03zq",
    "mark10zq office keys",
    "travel refund",
]
DOCS = 12
USERS = ["user:ann", "user:bob"]
GROUPS = ["group:hr", "group:legal", "group:eng"]
READERS = [*USERS, *GROUPS, "unix:group:staff", PUBLIC_PRINCIPAL, "!nobody"]
CALLERS = [*USERS, *GROUPS, "unix:group:staff", "user:zed"]


def marker(doc: int) -> str:
    return f"mark{doc:02d}zq"


def doc_text(doc: int) -> str:
    topic = TOPICS[doc % len(TOPICS)]
    paragraphs = [
        f"Rule {doc}.{part}: {topic}; see {marker(doc)} for case {part}." for part in range(3)
    ]
    return "\n\n".join(paragraphs)


def chunk_texts() -> list[str]:
    return [chunk.page_content for chunk in chunks([None] * DOCS)]


def chunks(readers: Sequence[Sequence[str] | None]) -> list[Document]:
    """Every chunk, exact slices of its document, with its document's ``readers`` (None or
    empty: no ``access`` key)."""
    out = []
    for doc in range(DOCS):
        text = doc_text(doc)
        start = 0
        for part, paragraph in enumerate(text.split("\n\n")):
            start = text.index(paragraph, start)
            meta = {
                "source": f"d{doc:02d}.md", "doc_id": f"d{doc:02d}", "chunk_index": part,
                "start_index": start, "end_index": start + len(paragraph),
                "parent_id": f"p{doc:02d}", "parent_start": 0, "parent_end": len(text),
            }  # fmt: skip
            if readers[doc]:
                meta[ACCESS_KEY] = sorted(set(readers[doc] or []))
            out.append(Document(page_content=paragraph, metadata=meta, id=f"c{doc:02d}{part}"))
            start += len(paragraph)
    return out


class Precomputed(Embeddings):
    """The real model's vectors for the world's texts and queries, computed once; any other
    text goes to the model. Carries the model's name and fingerprint (the collection's)."""

    def __init__(self, model: Embeddings, name: str, fingerprint: str) -> None:
        self.model, self.model_name, self.fingerprint = model, name, fingerprint
        texts = chunk_texts()
        self.documents = dict(zip(texts, model.embed_documents(texts), strict=True))
        self.queries = {q: model.embed_query(q) for q in QUERIES}

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.documents.get(t) or self.model.embed_documents([t])[0] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.queries.get(text) or self.model.embed_query(text)


def write(store: object, readers: Sequence[Sequence[str] | None], vectors: Precomputed) -> None:
    """(Re)write every chunk with ``readers`` through ``store.add_documents`` (vectors given),
    and each parent section with its document's readers."""
    docs = chunks(readers)
    given = [vectors.documents[d.page_content] for d in docs]
    parents = [doc_text(int(d.metadata["doc_id"][1:])) for d in docs]
    store.add_documents(docs, vectors=given, parent_texts=parents)  # type: ignore[attr-defined]
    rows = []
    for doc in range(DOCS):
        meta: dict[str, object] = {"source": f"d{doc:02d}.md", "doc_id": f"d{doc:02d}"}
        if readers[doc]:
            meta[ACCESS_KEY] = sorted(set(readers[doc] or []))
        rows.append((f"p{doc:02d}", Document(page_content=doc_text(doc), metadata=meta)))
    store.parent_store.mset(rows)  # type: ignore[attr-defined]


def readable(readers: Sequence[Sequence[str] | None], caller: Sequence[str]) -> set[int]:
    """The documents ``caller`` may read."""
    named = {*caller, PUBLIC_PRINCIPAL}
    return {doc for doc, who in enumerate(readers) if who and named & set(who)}


def leaks(texts: Sequence[str], chunk_ids: Sequence[str], allowed: set[int]) -> list[str]:
    """What of ``texts`` / ``chunk_ids`` belongs to a document outside ``allowed``."""
    bad = [f"text of {marker(d)}" for d in range(DOCS) if d not in allowed
           for t in texts if marker(d) in t]  # fmt: skip
    bad += [i for i in chunk_ids if int(i[1:3]) not in allowed]
    return bad
