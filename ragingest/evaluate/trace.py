"""``ragingest trace``: where a condition the answer lost went missing.

Five checkpoints for each expected text, in pipeline order (docs/rules.md, "Five checkpoints"):

1. ``source`` — is it in the loaded source? With ``sources`` (files or folders) the files are
   loaded by ragingest's own loaders: found in a loaded document (its file and ``[start, end)``),
   or in the raw file but not the loaded text (lost at parsing or cleaning), or nowhere. Without
   ``sources`` the stored chunks of the collection stand in for the loaded documents.
2. ``chunks`` — which stored chunk holds it whole, or which chunks cut it; and whether that
   chunk's embedded text carries its heading (its ``section_path``).
3. ``retrieval`` — the rank at which search returns that chunk (dense, or hybrid); within
   ``k`` passes.
4. ``context`` — is it in what the generator gets: the retriever's passages after parent
   expansion, de-duplication and the token budget?
5. ``answer`` — with an answer (text, or a LangChain chat model asked with that context), does
   the answer contain it?

Texts are matched ignoring case and runs of whitespace (a user types the rule, not its line
breaks). The report names the first checkpoint that fails for each text and what to try.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.documents import Document

from ragingest.defaults import HYBRID, TRACE_K
from ragingest.evaluate.matching import contains, locate
from ragingest.evaluate.trace_report import Checkpoint, Expectation, TraceReport
from ragingest.loaders.markdown.source_offsets import indexed_text
from ragingest.retrieval.search import candidate_depth
from ragingest.splitters.dialects import heading_title
from ragingest.splitters.embedded import h1_and_nearest
from ragingest.splitters.structure import analyze

if TYPE_CHECKING:  # the types only: Chroma is imported when a trace opens the store
    from ragingest.vectorstore.access.principals import Access
    from ragingest.vectorstore.seam import ChunkSource

_DEPTH = 50  # retrieval ranks looked at before saying "not retrieved"


def trace(
    question: str,
    expect: Sequence[str],
    *,
    persist_dir: str | Path,
    collection: str,
    k: int = TRACE_K,
    hybrid: bool = HYBRID,
    sources: Sequence[str | Path] = (),
    answer: str | None = None,
    chat_model: Any = None,
    max_context_tokens: int | None = None,
    records_url: str | None = None,
    principals: Access = None,
) -> TraceReport:
    """Run the five checkpoints for each of ``expect`` (see the module docstring), reading
    only what ``principals`` may read (required on a collection with an access policy)."""
    from ragingest.retrieval.heading_first import HeadingFirstRetriever
    from ragingest.retrieval.opening import open_guarded
    from ragingest.vectorstore.access.guarded import say_unmatched

    store = open_guarded(
        persist_dir, collection, principals, hybrid=hybrid, records_url=records_url
    )
    say_unmatched(store, collection)
    chunks = _stored_chunks(store)
    loaded = load_sources(sources) if sources else None
    ranked = _ranked(store, question, max(_DEPTH, candidate_depth(k)), hybrid)
    context = HeadingFirstRetriever(
        persist_dir=persist_dir, collection=collection, k=k, records_url=records_url,
        hybrid=hybrid, max_context_tokens=max_context_tokens, principals=principals,
    ).invoke(question)  # fmt: skip
    if answer is None and chat_model is not None:
        answer = _ask(chat_model, question, context)
    expectations = []
    for text in expect:
        points = [source_check(text, chunks, loaded)]
        holders = _holders(text, chunks)
        points.append(_chunk_check(holders))
        points.append(_retrieval_check(holders, ranked, k, hybrid))
        points.append(_context_check(text, context))
        points.append(_answer_check(text, answer))
        expectations.append(Expectation(text, points))
    return TraceReport(question, expectations)


def _stored_chunks(store: ChunkSource) -> list[Document]:
    return [chunk.document() for chunk in store.chunks()]


def load_sources(paths: Sequence[str | Path]) -> list[tuple[str, str, list[Document]]]:
    """(source, raw decoded text, loaded documents) per file under ``paths``."""
    from ragingest.loaders import loader_for, walk

    out = []
    for found in walk(paths, (), ()):
        try:
            documents = list(loader_for(found.path, found.base or found.root).lazy_load())
        except Exception as exc:  # a file that does not load: its text is lost at parsing
            documents = [Document(page_content="", metadata={"error": str(exc)})]
        raw = found.path.read_bytes().decode("utf-8", errors="replace")
        out.append((found.source, raw, documents))
    return out


def source_check(
    text: str, chunks: list[Document], loaded: list[tuple[str, str, list[Document]]] | None
) -> Checkpoint:
    """The 'source' checkpoint: whether ``text`` is in the loaded documents (or, without them, in
    the documents the chunks came from)."""
    if loaded is None:
        for doc in _documents_from_chunks(chunks):
            span = locate(text, doc.page_content)
            if span:
                source = doc.metadata.get("source", "")
                return Checkpoint(
                    "source", True, f"{source} [{span[0]}, {span[1]}) (from the stored chunks)",
                    {"source": source, "start": span[0], "end": span[1]},
                )
        return Checkpoint(
            "source", False, "in no stored chunk: lost at loading or cleaning, or worded "
            "otherwise (pass --source PATH to check the files themselves)",
        )
    raw_hits = []
    for source, raw, documents in loaded:
        for doc in documents:
            if not contains(doc.page_content, text):  # the loaded (cleaned) text decides
                continue
            # reported in the coordinates chunks use: the file itself for text formats
            span = locate(text, indexed_text(doc.page_content, doc.metadata))
            span = span or locate(text, doc.page_content)
            if span:
                return Checkpoint(
                    "source", True, f"{source} [{span[0]}, {span[1]})",
                    {"source": source, "start": span[0], "end": span[1]},
                )
        if contains(raw, text):
            raw_hits.append(source)
    if raw_hits:
        return Checkpoint(
            "source", False, f"in {', '.join(raw_hits)} but not in its loaded text: lost at "
            "parsing or cleaning", {"files": raw_hits},
        )
    return Checkpoint("source", False, "in none of the given files")


def _documents_from_chunks(chunks: list[Document]) -> list[Document]:
    """Each stored document rebuilt from its chunks' exact spans (gaps: what no chunk holds)."""
    by_doc: dict[str, list[Document]] = {}
    for chunk in chunks:
        by_doc.setdefault(str(chunk.metadata.get("doc_id", "")), []).append(chunk)
    out = []
    for group in by_doc.values():
        parts: list[str] = []
        end = 0
        for chunk in sorted(group, key=lambda c: int(c.metadata.get("start_index", 0))):
            start = int(chunk.metadata.get("start_index", 0))
            if start >= end:
                parts.append(" " * (start - end) + chunk.page_content)
            else:  # overlap: only the new tail
                parts.append(chunk.page_content[end - start :])
            end = max(end, start + len(chunk.page_content))
        out.append(Document(page_content="".join(parts), metadata=dict(group[0].metadata)))
    return out


def _holders(text: str, chunks: list[Document]) -> dict[str, Any]:
    """The chunks holding ``text`` whole, else the chunks of one document that cut it; and the
    heading above it in that document."""
    found: dict[str, Any] = {"whole": [], "cut": [], "heading": None}
    for doc in _documents_from_chunks(chunks):
        span = locate(text, doc.page_content)
        if span is None:
            continue
        doc_id = doc.metadata.get("doc_id")
        mine = [c for c in chunks if c.metadata.get("doc_id") == doc_id]
        found["heading"] = _heading_above(doc.page_content, span[0])
        found["whole"] = [c for c in mine if contains(c.page_content, text)]
        if not found["whole"]:
            cutting = (c for c in mine if _start(c) < span[1] and span[0] < _end(c))
            found["cut"] = sorted(cutting, key=_start)
        return found
    found["whole"] = [c for c in chunks if contains(c.page_content, text)]
    return found


def _start(chunk: Document) -> int:
    return int(chunk.metadata.get("start_index", 0))


def _end(chunk: Document) -> int:
    return _start(chunk) + len(chunk.page_content)


def _heading_above(text: str, offset: int) -> str | None:
    """The heading the splitter's breadcrumb names for a chunk at ``offset``: the nearest one
    open there, found by the splitter's own structure (no ``#`` line inside fenced code, the
    title as the breadcrumb writes it: ``splitters.embedded.h1_and_nearest``)."""
    path = analyze(text).open_at(offset)
    named = h1_and_nearest(path)
    return heading_title(named[-1]) if named else None


def _describe(chunk: Document) -> str:
    meta = chunk.metadata
    return (
        f"{meta.get('source', '')} #{meta.get('chunk_index', '?')} "
        f"[{meta.get('start_index', '?')}, {meta.get('end_index', '?')})"
    )


def _chunk_check(holders: dict[str, Any]) -> Checkpoint:
    if holders["whole"]:
        chunk = holders["whole"][0]
        path = str(chunk.metadata.get("section_path") or "")
        heading = holders["heading"]
        if heading is None:
            note = "its document has no heading above it"
        elif heading in path or heading in chunk.page_content:
            note = f"embedded with its heading «{heading}»"
        else:
            note = f"embedded WITHOUT its heading «{heading}»"
        return Checkpoint(
            "chunks", True, f"whole in {_describe(chunk)}; {note}",
            {"chunk_ids": [c.id for c in holders["whole"]], "heading": heading,
             "section_path": path},
        )
    if holders["cut"]:
        names = " | ".join(_describe(c) for c in holders["cut"])
        return Checkpoint(
            "chunks", False, f"cut across {len(holders['cut'])} chunks: {names}",
            {"chunk_ids": [c.id for c in holders["cut"]]},
        )
    return Checkpoint("chunks", False, "no stored chunk holds any of it")


def _ranked(store: ChunkSource, question: str, depth: int, hybrid: bool) -> list[str]:
    """Chunk ids in the order search returns them, best first."""
    from ragingest.retrieval.search import rank_chunks

    ranking = rank_chunks(store, question, depth, hybrid=hybrid)
    return [hit.chunk_id for hit in ranking.hits]


def _retrieval_check(
    holders: dict[str, Any], ranked: list[str], k: int, hybrid: bool
) -> Checkpoint:
    wanted = [c.id for c in holders["whole"] or holders["cut"]]
    ranks = sorted(ranked.index(i) + 1 for i in wanted if i in ranked)
    how = "hybrid" if hybrid else "dense"
    if not wanted:
        return Checkpoint("retrieval", False, "nothing to retrieve: no chunk holds it")
    if not ranks:
        return Checkpoint("retrieval", False, f"not in the top {len(ranked)} ({how})")
    ok = ranks[0] <= k
    return Checkpoint(
        "retrieval", ok, f"rank {ranks[0]} ({how}, k = {k})", {"ranks": ranks, "k": k}
    )


def _context_check(text: str, context: list[Document]) -> Checkpoint:
    for rank, doc in enumerate(context, 1):
        if contains(doc.page_content, text):
            return Checkpoint(
                "context", True, f"in passage {rank} of {len(context)}", {"passage": rank}
            )
    return Checkpoint("context", False, f"in none of the {len(context)} passages")


def _ask(chat_model: Any, question: str, context: list[Document]) -> str:
    passages = "\n\n".join(doc.page_content for doc in context)
    prompt = (
        "Answer the question from the context only; keep every condition and exception.\n\n"
        f"Context:\n{passages}\n\nQuestion: {question}"
    )
    reply = chat_model.invoke(prompt)
    return str(getattr(reply, "content", reply))


def _answer_check(text: str, answer: str | None) -> Checkpoint:
    if answer is None:
        return Checkpoint("answer", None, "not checked (give --answer TEXT)")
    if contains(answer, text):
        return Checkpoint("answer", True, "the answer contains it")
    return Checkpoint("answer", False, "the answer does not contain it")

