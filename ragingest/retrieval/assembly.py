"""Joining neighbouring passages while a context is filled: one passage where two chunks meet.

A reference that spans a chunk boundary is whole only when both chunks are in the context *as
one passage*. ``pack`` fills a budget like ``context.fit_budget`` (best first, each passage
whole, one that does not fit skipped), and when a passage lies next to one already taken — the
same parent section, nothing but whitespace between them — it is joined to that one: the union
span, sliced from the section's text, so the joined text is still an exact slice of the file.
It costs what the joined text counts beyond the taken one (the whitespace between them, no
second copy of anything) and is kept only when that fits. A join that makes the passage touch
another taken one joins that one too. The joined passage keeps the rank of the better one.

Budget left over once every passage has been tried is spent on the sentences after the kept
passages (``grown``): the next one after each passage, best first, then a second round; each
sentence up to its end mark or a blank line in the same section, never into another kept
passage, and only when it fits. A rule often opens the chunk after
the one that matched ("…, однако если …"); nothing already taken is dropped for it, so a
context only ever gains text (bench/README.md, "Sentence after a passage").

Written by hand: LangChain and LlamaIndex merge whole parents (auto-merging) but have no join
of two neighbouring hits under a token budget.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from langchain_core.documents import Document

TokenCounter = Callable[[str], int]
Sections = Callable[[str], Document | None]  # parent_id -> the parent section (None: unknown)

# what describes one chunk and not a section holding it: a joined or parent passage drops them
CHUNK_ONLY = ("chunk_index", "token_count", "content_hash", "chunk_id")
# where the sentence after a passage ends: its end mark before whitespace, or a blank line
_SENTENCE_END = re.compile(r"[.!?…](?=\s)|\n[ \t]*\n")
# rounds of one sentence after every kept passage; a third round changed nothing on the tuning
# sets (bench/README.md) and each round re-counts every grown passage
SENTENCE_ROUNDS = 2


@dataclass
class _Taken:
    doc: Document
    tokens: int
    joined: bool = False  # doc is a new Document built by ``joined``


def _span(doc: Document) -> tuple[str, int, int]:
    meta = doc.metadata
    start = int(meta.get("start_index", 0))
    source = str(meta.get("doc_id") or meta.get("source", ""))
    return source, start, int(meta.get("end_index", start + len(doc.page_content)))


def chunk_ids(doc: Document) -> list[str]:
    """The ids of the chunks a passage holds: ``chunk_ids``, else ``chunk_id``, else its id."""
    ids = doc.metadata.get("chunk_ids") or [doc.metadata.get("chunk_id") or doc.id or ""]
    return [str(i) for i in ids if i]


def joined(a: Document, b: Document, sections: Sections) -> Document | None:
    """``a`` and ``b`` as one passage (``a``'s rank, id and metadata, the union span), when
    they are in one document and one parent section holds both with only whitespace between
    them (or they overlap); else None."""
    source_a, start_a, end_a = _span(a)
    source_b, start_b, end_b = _span(b)
    key = str(a.metadata.get("parent_id") or "")
    if source_a != source_b or not key or key != b.metadata.get("parent_id"):
        return None
    start, end = min(start_a, start_b), max(end_a, end_b)
    low, high = sorted([(start_a, end_a), (start_b, end_b)])
    section = sections(key)
    if section is None or "parent_start" not in a.metadata:
        return None
    offset = int(a.metadata["parent_start"])
    if start < offset or end > offset + len(section.page_content):
        return None
    if section.page_content[low[1] - offset : high[0] - offset].strip():
        return None  # text between them that neither holds: not neighbours
    meta = {k: v for k, v in a.metadata.items() if k not in CHUNK_ONLY}
    ids = chunk_ids(a)
    meta.update(
        start_index=start,
        end_index=end,
        chunk_ids=ids + [i for i in chunk_ids(b) if i not in ids],
    )
    text = section.page_content[start - offset : end - offset]
    return Document(id=a.id, page_content=text, metadata=meta)


def pack(
    passages: Sequence[Document],
    max_tokens: int | None,
    count: TokenCounter,
    sections: Sections,
) -> tuple[list[Document], list[Document], int]:
    """``(kept, skipped, tokens)``: best first, each passage whole within ``max_tokens`` (None:
    all), neighbours joined (see the module docstring); ``tokens`` = the sum of
    ``count(page_content)`` over ``kept``."""
    taken: list[_Taken] = []
    skipped: list[Document] = []
    total = 0
    rank: dict[str, int] = {}
    for passage in passages:
        for i in chunk_ids(passage):
            rank.setdefault(i, len(rank))
        unions = ((i, joined(t.doc, passage, sections)) for i, t in enumerate(taken))
        at, union = next(((i, u) for i, u in unions if u is not None), (None, None))
        if at is None or union is None:
            tokens = count(passage.page_content)
            if max_tokens is not None and total + tokens > max_tokens:
                skipped.append(passage)
                continue
            taken.append(_Taken(passage, tokens))
            total += tokens
            continue
        tokens = count(union.page_content)
        if max_tokens is not None and total + tokens - taken[at].tokens > max_tokens:
            skipped.append(passage)
            continue
        total += tokens - taken[at].tokens
        taken[at] = _Taken(union, tokens, joined=True)
        total = _join_touching(taken, at, total, max_tokens, count, sections)
    if max_tokens is not None:
        total = _spend_leftover(taken, total, max_tokens, count, sections)
    for t in taken:
        if t.joined:  # the chunks best first, as for any passage
            t.doc.metadata["chunk_ids"] = sorted(chunk_ids(t.doc), key=rank.__getitem__)
    return [t.doc for t in taken], skipped, total


def _join_touching(
    taken: list[_Taken],
    at: int,
    total: int,
    max_tokens: int | None,
    count: TokenCounter,
    sections: Sections,
) -> int:
    """Join ``taken[at]`` with every other taken passage it now touches, while that fits;
    the better-ranked of each pair keeps its place. Returns the new total."""
    while True:
        for other in range(len(taken)):
            if other == at:
                continue
            first, second = sorted((at, other))
            union = joined(taken[first].doc, taken[second].doc, sections)
            if union is None:
                continue
            tokens = count(union.page_content)
            extra = tokens - taken[first].tokens - taken[second].tokens
            if max_tokens is not None and total + extra > max_tokens:
                continue
            taken[first] = _Taken(union, tokens, joined=True)
            del taken[second]
            total += extra
            at = first
            break
        else:
            return total


def grown(doc: Document, sections: Sections, stop: int | None = None) -> Document | None:
    """``doc`` with the sentence that follows it in its parent section: up to the next
    sentence end (``.!?…`` before whitespace) or blank line, at most to offset ``stop`` (the
    start of another passage) and the section's end; None when nothing follows or the section
    is unknown. An exact slice of the section, the span and ``chunk_ids`` updated."""
    meta = doc.metadata
    key = str(meta.get("parent_id") or "")
    section = sections(key) if key and "parent_start" in meta else None
    if section is None:
        return None
    _, start, end = _span(doc)
    offset, text = int(meta["parent_start"]), section.page_content
    limit = len(text) if stop is None else min(len(text), stop - offset)
    at = end - offset
    if start < offset or at > len(text):
        return None
    first = at
    while first < limit and text[first].isspace():
        first += 1
    if first >= limit:
        return None
    mark = _SENTENCE_END.search(text, first, limit)
    new_end = limit if mark is None else mark.start() + (text[mark.start()] != "\n")
    while text[new_end - 1].isspace():  # ends on the sentence, not on the gap after it
        new_end -= 1
    meta = {k: v for k, v in meta.items() if k not in CHUNK_ONLY}
    meta.update(end_index=new_end + offset, chunk_ids=chunk_ids(doc))
    return Document(id=doc.id, page_content=text[start - offset : new_end], metadata=meta)


def _spend_leftover(
    taken: list[_Taken], total: int, max_tokens: int, count: TokenCounter, sections: Sections
) -> int:
    """``SENTENCE_ROUNDS`` rounds: grow each taken passage, best first, by the sentence after it
    where that fits (not into another taken passage of the same document). Returns the new
    total."""
    for _ in range(SENTENCE_ROUNDS):
        total = _grow_once(taken, total, max_tokens, count, sections)
    return total


def _grow_once(
    taken: list[_Taken], total: int, max_tokens: int, count: TokenCounter, sections: Sections
) -> int:
    for i, t in enumerate(taken):
        source, _, end = _span(t.doc)
        after = [s for d, s, _ in (_span(o.doc) for o in taken) if d == source and s >= end]
        longer = grown(t.doc, sections, min(after, default=None))
        if longer is None:
            continue
        tokens = count(longer.page_content)
        if total + tokens - t.tokens <= max_tokens:
            total += tokens - t.tokens
            taken[i] = _Taken(longer, tokens, joined=True)
    return total
