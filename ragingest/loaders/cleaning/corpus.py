"""Cleaning across the documents of one run: copies, and boilerplate (cleaning rule
``boilerplate``).

- **Copies are not boilerplate.** Files whose blocks are the same (identical, or a Jaccard
  similarity of their block sets of at least ``COPY_SIMILARITY``: a version that differs in a
  sentence) or whose bodies are (``COPY_RESEMBLANCE`` of their character shingles: two OCR
  readings of one memo) form one group of copies. Each copy is kept whole and split on its
  own (its own source, offsets and pages; the embedding cache computes a text once); the run
  report names the groups (``CorpusCleaner.copies_of``).
- **Boilerplate is what repeats at the margins of distinct documents**: a plain paragraph
  (``markdown_blocks``: never a heading, a fence, a table row, a list item; never the first
  paragraph under a heading, which is that section's text) among the first or last
  ``EDGE_BLOCKS`` blocks of a page (of the document, when it has no pages) that appears
  at the margins of at least ``BOILERPLATE_MIN_GROUPS`` groups of copies (and
  ``BOILERPLATE_MIN_SHARE`` of them). It is removed only while the document keeps at least
  ``1 - MAX_REMOVED_SHARE`` of its characters (a document that would lose more keeps all).
- Every removal is a ``Removal`` (rule, span, page, text): the split stage lists them per
  file in the run report and ``inspect`` shows them; ``apply_corpus`` removes them with
  ``loaders.cleaning.removal.remove``, which moves every coordinate (source map, page map, box map)
  by the exact removed spans.

The scan holds digests (``FileDigest``), not the corpus's text: 16-byte block digests, a
bottom-``SKETCH_SIZE`` sketch of each file's blocks and one of its shingles for finding its
copies.
"""

from __future__ import annotations

import hashlib
import math
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ragingest.loaders.cleaning.markdown_blocks import (
    HEADING,
    PARAGRAPH,
    STRUCTURE,
    MdBlock,
    markdown_blocks,
)
from ragingest.loaders.cleaning.removal import remove
from ragingest.loaders.cleaning.rules import CleaningRules, Removal, add_counts, removals_of
from ragingest.loaders.cleaning.shingles import SHINGLE_SKETCH, resemblance, shingle_sketch
from ragingest.schema import CLEANING_HINT, PAGE_MAP_HINT

if TYPE_CHECKING:  # the type only: cleaning itself never builds a Document
    from langchain_core.documents import Document

BOILERPLATE_RULE = "boilerplate"
BOILERPLATE_MIN_GROUPS = 3  # distinct documents (groups of copies count once)
BOILERPLATE_MIN_SHARE = 0.05
BOILERPLATE_MIN_CHARS = 40
BOILERPLATE_MAX_CHARS = 1000  # a disclaimer, a signature: not a chapter
EDGE_BLOCKS = 2  # the margins: the first and last two blocks of each page
MAX_REMOVED_SHARE = 0.25  # never more than a quarter of a document
COPY_SIMILARITY = 0.6  # Jaccard of two files' block sets: copies at or above
COPY_RESEMBLANCE = 0.5  # ... or of their bodies' character shingles (OCR readings of a page)
SKETCH_SIZE = 64
COMMON_SKETCH_VALUE = 256  # a block in more files' sketches finds no copies (no n² pairs)
COMPARED_PER_VALUE = 8  # files sharing a sketch value: each compared with the 8 before it
FINGERPRINT_BYTES = 16

PageMap = Sequence[tuple[int, int]]


def digest(text: str) -> bytes:
    """The 16-byte digest of a block's text (whitespace and case folded; ``str.split``, not
    ``clean_inline``: the scan digests every block of the corpus)."""
    folded = " ".join(text.lower().split()).encode()
    return hashlib.blake2b(folded, digest_size=FINGERPRINT_BYTES).digest()


def margin_paragraphs(
    text: str, page_map: PageMap = (), blocks: Sequence[MdBlock] | None = None
) -> list[tuple[int, int, bytes]]:
    """(start, end, digest) of the plain paragraphs of ``text`` at its margins (the first and
    last ``EDGE_BLOCKS`` blocks of each page) that are sized as boilerplate (``blocks``: its
    ``markdown_blocks`` when known)."""
    blocks = markdown_blocks(text) if blocks is None else blocks
    starts = [offset for offset, _page in page_map]
    by_page: dict[int, list[int]] = {}
    for i, block in enumerate(blocks):
        by_page.setdefault(bisect_right(starts, block.start), []).append(i)
    edges = {i for idx in by_page.values() for i in idx[:EDGE_BLOCKS] + idx[-EDGE_BLOCKS:]}
    out = []
    for i in sorted(edges):
        start, end, kind = blocks[i]
        if kind != PARAGRAPH or (i and blocks[i - 1].kind == HEADING):  # a section's own text
            continue
        size = len(" ".join(text[start:end].split()))
        if BOILERPLATE_MIN_CHARS <= size <= BOILERPLATE_MAX_CHARS:
            out.append((start, end, digest(text[start:end])))
    return out


def document_pages(documents: Iterable[Document]) -> list[tuple[str, PageMap]]:
    """``(text, page_map)`` of each loaded document: what the corpus scan digests."""
    return [(d.page_content, d.metadata.get(PAGE_MAP_HINT) or ()) for d in documents]


@dataclass(frozen=True)
class FileDigest:
    """What the scan keeps of one file: the digest of its whole text, a sketch of its block
    digests (the ``SKETCH_SIZE`` smallest, and how many there are), a sketch of the character
    shingles of its body (``loaders.cleaning.shingles``: its paragraphs, lists and tables, margins
    and code left out) and its margin digests."""

    whole: bytes
    sketch: tuple[bytes, ...]
    blocks: int
    shingles: tuple[int, ...]
    margins: frozenset[bytes]

    @classmethod
    def of(cls, documents: Iterable[tuple[str, PageMap]]) -> FileDigest:
        """The digest of one file's documents, each ``(text, page_map)``."""
        whole = hashlib.blake2b(digest_size=FINGERPRINT_BYTES)
        blocks: set[bytes] = set()
        margins: set[bytes] = set()
        body: list[str] = []
        for text, page_map in documents:
            whole.update(digest(text))
            found = markdown_blocks(text)
            blocks.update(digest(text[b.start : b.end]) for b in found)
            edges = margin_paragraphs(text, page_map, found)
            margins.update(fp for _s, _e, fp in edges)
            at_edge = {start for start, _e, _fp in edges}
            body += [
                text[b.start : b.end]
                for b in found
                if b.kind in (PARAGRAPH, STRUCTURE) and b.start not in at_edge
            ]
        sketch = tuple(sorted(blocks)[:SKETCH_SIZE])
        shingles = shingle_sketch("\n".join(body))
        return cls(whole.digest(), sketch, len(blocks), shingles, frozenset(margins))


def are_copies(a: FileDigest, b: FileDigest) -> bool:
    """Whether two files are copies: the same text, blocks mostly the same (a version that
    differs in a sentence) or a body mostly the same to the character (two OCR readings)."""
    full = len(a.shingles) == len(b.shingles) == SHINGLE_SKETCH  # no few-line bodies
    return (
        a.whole == b.whole
        or resemblance(a.sketch, b.sketch, SKETCH_SIZE) >= COPY_SIMILARITY
        or (full and resemblance(a.shingles, b.shingles) >= COPY_RESEMBLANCE)
    )


@dataclass
class CorpusCleaner:
    """The run's cross-document cleaning (module docstring): ``observe`` each file during the
    scan, then ``apply_corpus`` each document (its ``removals``). ``copies_of`` names a
    file's copies."""

    rules: CleaningRules = field(default_factory=CleaningRules)
    cache_chars: int = 8 * 2**20
    files: int = 0
    _digests: dict[str, FileDigest] = field(default_factory=dict)
    _groups: dict[str, tuple[str, ...]] | None = None
    _boilerplate: frozenset[bytes] | None = None
    _cache: dict[str, list[Document]] = field(default_factory=dict)

    def remember(self, key: str, documents: list[Document]) -> None:
        """Keep a scanned file's documents (within the cache budget) for ``take``."""
        size = sum(len(d.page_content) for d in documents)
        if size <= self.cache_chars:
            self._cache[key] = documents
            self.cache_chars -= size

    def take(self, key: str) -> list[Document] | None:
        """The documents cached for ``key`` during the scan, removed from the cache; ``None``
        when they were not kept."""
        documents = self._cache.pop(key, None)
        if documents is not None:
            self.cache_chars += sum(len(d.page_content) for d in documents)
        return documents

    def observe(self, key: str, documents: Iterable[tuple[str, PageMap]]) -> None:
        """Take one file (``key``: ``FileTask.name``) into the scan: its documents' texts and
        page maps."""
        self.observe_digest(key, FileDigest.of(documents))

    def observe_digest(self, key: str, found: FileDigest) -> None:
        """Take one file into the scan from its ``FileDigest``, computed elsewhere."""
        self.files += 1
        self._digests[key] = found
        self._groups = self._boilerplate = None

    @property
    def groups(self) -> dict[str, tuple[str, ...]]:
        """Each observed file's group of copies (itself included, in observation order)."""
        if self._groups is None:
            self._groups = _copy_groups(self._digests)
        return self._groups

    def copies_of(self, key: str) -> list[str]:
        """The other files of ``key``'s group of copies (empty: it has none)."""
        return [k for k in self.groups.get(key, ()) if k != key]

    @property
    def boilerplate(self) -> frozenset[bytes]:
        """Digests at the margins of enough distinct documents to count as boilerplate."""
        if self._boilerplate is None:
            seen: Counter[bytes] = Counter()
            distinct = {group[0]: group for group in self.groups.values()}
            for group in distinct.values():
                seen.update(set().union(*(self._digests[k].margins for k in group)))
            need = max(BOILERPLATE_MIN_GROUPS, math.ceil(BOILERPLATE_MIN_SHARE * len(distinct)))
            self._boilerplate = frozenset(fp for fp, n in seen.items() if n >= need)
        return self._boilerplate

    def lean(self) -> CorpusCleaner:
        """A cleaner that cleans and names copies as this one, without the scan's digests (for
        workers)."""
        lean = CorpusCleaner(self.rules, cache_chars=0, files=self.files)
        lean._groups = {k: g for k, g in self.groups.items() if len(g) > 1}
        lean._boilerplate = self.boilerplate
        return lean

    def removals(self, text: str, page_map: PageMap = ()) -> list[tuple[int, int]]:
        """The spans of ``text`` that are boilerplate (``page_map``: its pages): none when
        the rule is off or they would take more than ``MAX_REMOVED_SHARE`` of it."""
        if not self.rules.boilerplate or not self.boilerplate:
            return []
        found = [(s, e) for s, e, fp in margin_paragraphs(text, page_map) if fp in self.boilerplate]
        if sum(e - s for s, e in found) > MAX_REMOVED_SHARE * len(text.strip()):
            return []
        return found


def _copy_groups(digests: dict[str, FileDigest]) -> dict[str, tuple[str, ...]]:
    keys = list(digests)
    parent = list(range(len(keys)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    by_value: dict[bytes | int, list[int]] = {}
    for i, key in enumerate(keys):
        found = digests[key]
        values: list[bytes | int] = [found.whole, *found.sketch, *found.shingles]
        for value in values:
            by_value.setdefault(value, []).append(i)
    compared: set[tuple[int, int]] = set()  # two files share many values: compared once
    for members in by_value.values():
        if len(members) < 2 or len(members) > COMMON_SKETCH_VALUE:
            continue
        for j, one in enumerate(members):
            for other in members[max(0, j - COMPARED_PER_VALUE) : j]:
                a, b = root(one), root(other)
                if a == b or (other, one) in compared:
                    continue
                compared.add((other, one))
                if are_copies(digests[keys[one]], digests[keys[other]]):
                    parent[max(a, b)] = min(a, b)
    members_of: dict[int, list[str]] = {}
    for i, key in enumerate(keys):
        members_of.setdefault(root(i), []).append(key)
    return {key: tuple(group) for group in members_of.values() for key in group}


def apply_corpus(
    document: Document,
    corpus: CorpusCleaner | None,
    counts: dict[str, int],
    removed: list[Removal],
) -> Document:
    """``document`` with the run's boilerplate removed (counted into ``counts``, with the
    loader's own counts; each removal, the loader's too, appended to ``removed``)."""
    add_counts(counts, document.metadata.get(CLEANING_HINT))
    removed.extend(removals_of(document.metadata.get(CLEANING_HINT)))
    if corpus is None:
        return document
    page_map = document.metadata.get(PAGE_MAP_HINT) or ()
    spans = corpus.removals(document.page_content, page_map)
    document, found = remove(document, spans, BOILERPLATE_RULE)
    counts["boilerplate_paragraphs"] += len(found)
    removed.extend(found)
    return document
