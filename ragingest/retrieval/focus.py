"""A second stage that reads the query with the passage: the part of a matched section that
answers, not its head (``SectionFocus``, a LangChain ``BaseDocumentCompressor``).

The retrieval ranks chunks; a section matched by the query is often cut to the chunk that
matched, while what answers is a caveat list or a sentence further down the section (a
lower-ranked chunk, or none in the candidates). ``SectionFocus`` reads the sections of the
best ``read`` passages: each is cut into units (paragraphs, list items, sentences of a long
paragraph: exact slices of the section), the units are embedded with the collection's model
(the same e5 that ranked the chunks; a multilingual cross-encoder would read the pair better,
but none ships in a package the registries give: bench/README.md, "A second stage before
the budget"), and the ``pick`` units closest to the query that the passages above them do
not already hold, and that are closer to it than the passage that matched their section
(``over_head``), are inserted right after the best passage of their section. The budget assembly
(``assembly.pack``) then takes them best first like any passage, and joins one that touches a
taken passage.

Contract: ``compress_documents(passages, query)`` returns the passages in their order with
the new ones inserted, never drops or changes one; each new passage is an exact slice of its
section (``start_index``/``end_index`` in the file, the section's metadata, no chunk id); a
passage without a known section, or a store without sections, gives the passages back as
they are. Cost: one query embedding and at most ``max_units`` short texts a query (vectors
of units already seen are kept in memory, ``UNIT_CACHE`` of them).
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Sequence
from itertools import pairwise
from typing import Any

import numpy as np
from langchain_core.callbacks import Callbacks
from langchain_core.documents import BaseDocumentCompressor, Document
from langchain_core.embeddings import Embeddings
from pydantic import ConfigDict, PrivateAttr

from ragingest.retrieval.assembly import CHUNK_ONLY, Sections
from ragingest.retrieval.next_section import NextSection
from ragingest.retrieval.vector_memo import remembered

# a unit ends at a blank line or before a list item; a longer paragraph at its sentence ends
_BREAK = re.compile(r"\n[ \t]*\n|\n(?=[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t])")
_SENTENCE = re.compile(r"(?<=[.!?…])[ \t]+(?=\S)")
LONG_UNIT = 400  # characters: a paragraph this long is read by its sentences
MIN_UNIT = 12  # characters: a shorter unit (a lone heading mark, a rule) is not read alone
UNIT_CACHE = 4096


def units(text: str) -> list[tuple[int, int]]:
    """Spans of ``text`` cut into paragraphs and list items, a paragraph over ``LONG_UNIT``
    characters into sentences; edges trimmed, units under ``MIN_UNIT`` characters left out."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for part in [*_BREAK.finditer(text), None]:
        end = len(text) if part is None else part.start()
        pieces = [(pos, end)]
        if end - pos > LONG_UNIT:
            cuts = [m.start() for m in _SENTENCE.finditer(text, pos, end)]
            bounds = [pos, *cuts, end]
            pieces = list(pairwise(bounds))
        for a, b in pieces:
            while a < b and text[a].isspace():
                a += 1
            while b > a and text[b - 1].isspace():
                b -= 1
            if b - a >= MIN_UNIT:
                spans.append((a, b))
        pos = len(text) if part is None else part.end()
    return spans


class SectionFocus(BaseDocumentCompressor):
    """The units of the matched sections that answer the query, added to the passages (see
    the module docstring). ``sections``: parent_id -> section (``ParentSource.mget`` of one
    id); ``embeddings``: the collection's model."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    sections: Sections
    embeddings: Embeddings
    read: int = 3  # matched sections read: the best passages' distinct sections
    pick: int = 2  # units added a query
    max_units: int = 48  # units embedded a query, shared by the sections read
    over_head: bool = True  # a unit is added only when it is closer to the query than the
    # passage that matched its section (what answers, not the head)
    _vectors: OrderedDict[str, np.ndarray] = PrivateAttr(default_factory=OrderedDict)

    def compress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> Sequence[Document]:
        """The passages with the answering units inserted (module docstring)."""
        passages = list(documents)
        candidates = self._candidates(passages)
        if not candidates:
            return passages
        query_vector = np.asarray(self.embeddings.embed_query(query), dtype=np.float32)
        vectors = self._embed([text for _, _, _, text in candidates])
        scores = vectors @ query_vector
        heads = sorted({at for at, _, _, _ in candidates})
        head = dict.fromkeys(heads, -np.inf)
        if self.over_head:
            texts = [_embedded(passages[at]) for at in heads]
            head = dict(zip(heads, self._embed(texts) @ query_vector, strict=True))
        chosen: dict[int, list[Document]] = {}
        for i in np.argsort(-scores, kind="stable")[: self.pick]:
            at, start, end, _ = candidates[int(i)]
            if scores[i] > head[at]:
                chosen.setdefault(at, []).append(_unit(passages[at], start, end, self.sections))
        out: list[Document] = []
        for at, passage in enumerate(passages):
            out.append(passage)
            out.extend(sorted(chosen.get(at, []), key=lambda d: d.metadata["start_index"]))
        return out

    def _candidates(self, passages: list[Document]) -> list[tuple[int, int, int, str]]:
        """(rank of the section's best passage, start, end in the file, text to embed) of the
        units of the sections read that no passage up to that rank holds."""
        read: list[tuple[int, Document]] = []
        seen: set[str] = set()
        for at, passage in enumerate(passages):
            key = str(passage.metadata.get("parent_id") or "")
            if key and key not in seen and "parent_start" in passage.metadata:
                seen.add(key)
                read.append((at, passage))
            if len(read) == self.read:
                break
        share = max(1, self.max_units // max(len(read), 1))
        out: list[tuple[int, int, int, str]] = []
        for at, passage in read:
            section = self.sections(str(passage.metadata["parent_id"]))
            if section is None:
                continue
            offset = int(passage.metadata["parent_start"])
            source = _source(passage)
            held = [_span(p) for p in passages[: at + 1] if _source(p) == source]
            title = _title(passage)
            found = [
                (offset + a, offset + b)
                for a, b in units(section.page_content)
                if not any(s <= offset + a and offset + b <= e for s, e in held)
            ]
            middle = (_span(passage)[0] + _span(passage)[1]) / 2
            found.sort(key=lambda span: abs((span[0] + span[1]) / 2 - middle))
            for start, end in sorted(found[:share]):
                text = section.page_content[start - offset : end - offset]
                out.append((at, start, end, f"{title}\n{text}" if title else text))
        return out

    def _embed(self, texts: list[str]) -> np.ndarray:
        """Unit vectors of ``texts``, those seen before from memory."""
        return remembered(self._vectors, self.embeddings, texts, UNIT_CACHE)


def _source(doc: Document) -> str:
    return str(doc.metadata.get("doc_id") or doc.metadata.get("source", ""))


def _title(doc: Document) -> str:
    return str(doc.metadata.get("section_path") or "")


def _embedded(doc: Document) -> str:
    """A passage as its units are embedded: its section's path, then its text."""
    title = _title(doc)
    return f"{title}\n{doc.page_content}" if title else doc.page_content


def _span(doc: Document) -> tuple[int, int]:
    start = int(doc.metadata.get("start_index", 0))
    return start, int(doc.metadata.get("end_index", start + len(doc.page_content)))


def _unit(passage: Document, start: int, end: int, sections: Sections) -> Document:
    """The unit ``[start, end)`` of ``passage``'s section as a passage: the section's
    metadata (``passage``'s less what describes one chunk), the exact slice."""
    meta: dict[str, Any] = {
        k: v for k, v in passage.metadata.items() if k not in CHUNK_ONLY and k != "chunk_ids"
    }
    offset = int(meta["parent_start"])
    section = sections(str(meta["parent_id"]))
    assert section is not None  # read by _candidates
    meta.update(start_index=start, end_index=end)
    return Document(page_content=section.page_content[start - offset : end - offset], metadata=meta)


class NeighboursFirst(BaseDocumentCompressor):
    """The candidates of the best passage's section that lie next to it (``chunk_index`` one
    apart, the same ``parent_id``), within the first ``depth``, moved up behind it: the two
    halves of one answer cut across chunks come together before other sections' chunks fill
    the budget. Nothing is embedded; nothing is dropped."""

    depth: int = 10
    best: int = 1  # the passages whose neighbours are moved up

    def compress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> Sequence[Document]:
        """The passages, the best ones' neighbours moved up behind them."""
        out = list(documents)
        for at in range(min(self.best, len(out))):
            anchor = out[at].metadata
            key, index = anchor.get("parent_id"), anchor.get("chunk_index")
            if not key or index is None:
                continue
            near = [
                j
                for j in range(at + 1, min(self.depth, len(out)))
                if out[j].metadata.get("parent_id") == key
                and abs(int(out[j].metadata.get("chunk_index", -9)) - int(index)) == 1
            ]
            moved = [out[j] for j in near]
            rest = [d for j, d in enumerate(out) if j not in near]
            out = rest[: at + 1] + moved + rest[at + 1 :]
        return out


def second_stage(
    stage: str | BaseDocumentCompressor | None, store: Any, source: Any
) -> BaseDocumentCompressor | None:
    """The retriever's ``second_stage`` as a compressor: a given one as it is, ``"sentences"``
    (``SectionFocus`` over ``source``'s sections with ``store``'s model; None without
    either), ``"neighbours"`` (``NeighboursFirst``), ``"next-section"``
    (``next_section.NextSection`` with ``store``'s model; None without it), names joined by
    ``+`` applied in that order (LangChain's ``DocumentCompressorPipeline``); ``ValueError``
    for another name."""
    if stage is None or isinstance(stage, BaseDocumentCompressor):
        return stage
    if "+" in stage:
        from langchain_classic.retrievers.document_compressors import (
            DocumentCompressorPipeline,
        )

        parts = [second_stage(name.strip(), store, source) for name in stage.split("+")]
        return DocumentCompressorPipeline(transformers=[p for p in parts if p is not None])
    if stage == "neighbours":
        return NeighboursFirst()
    if stage == "next-section":
        return None if store.embeddings is None else NextSection(embeddings=store.embeddings)
    if stage == "sentences":
        parents = source.parent_store
        if parents is None or store.embeddings is None:
            return None
        return SectionFocus(
            sections=lambda key: parents.mget([key])[0], embeddings=store.embeddings
        )
    raise ValueError(
        "second_stage must be 'sentences', 'neighbours', 'next-section', names joined by '+' "
        f"or a BaseDocumentCompressor, not {stage!r}"
    )
