"""A document's token start offsets from its distinct words, for a word-local tokenizer.

Why by hand: the Rust tokenizer has no "offsets only" mode, and one offset pass over the whole
document was most of the splitter's time, while prose repeats the same words over and over.

Contract: ``WordTokens(backend).block_starts(blocks)`` returns, for each ``(start, block)``,
exactly the token start offsets that ``backend.encode_batch([block, ...],
add_special_tokens=False)`` gives for that block (shifted by ``start``), or ``None`` for a
block where it cannot prove that. Proof: the tokenizer is word-local (``is_word_local``: a
Metaspace/whitespace pre-tokenizer, a per-word model, normalizers that act within a
character or a run of spaces, confirmed on probes); the block holds no added token (those are
matched in the raw text and split words); every whitespace character in it is one that the
normalizer and pre-tokenizer treat as a plain space, alone and next to any other
(``separators``). Then a block is a run of *segments*, each a whitespace run and the word
after it (``\\s*\\S+``), and every segment but a block's first and last tokenizes the same
wherever it stands between two others: its run is one word boundary whose marker token maps
inside the run, and a word that normalizes to end in a space (a BOM, U+200B ...) joins the
next run. So each distinct middle segment is tokenized once (in a text of segments, where it
stands between two others again), cached, and its tokens are placed by its offset. A block's
first word (no run before it: the tokenizer adds the marker) is tokenized at the start of a
text, before a separator and a word; its last segment with the block's trailing whitespace
after a word, at the end of a text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from itertools import accumulate, chain, repeat
from operator import add
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tokenizers import Tokenizer
    from tokenizers.normalizers import Normalizer

_SEGMENT = re.compile(r"\s*\S+")
# every character Python's ``str.split`` / ``\s`` treats as whitespace
WHITESPACE = "".join(c for c in map(chr, range(0x3001)) if c.isspace())
# a word before and a separator and a word after a piece tokenized out of its place
_BEFORE, _AFTER = ".", " ."
_JOINED_CHARS = 2_000  # new segments per tokenizer input (a batch runs in parallel)
_CACHE_LIMIT = 200_000  # distinct segments remembered (~30 MB; then a new cache)
_PROBES = ["ab", "Щcd", "x1.", "(q)"]
_PROBE_SPACES = " \n\t\r\f"


class WordTokens:
    """Token starts through a cache of distinct segments (see module docstring)."""

    def __init__(self, backend: Tokenizer) -> None:
        self.backend = backend
        self.specials = [
            t.content for t in backend.get_added_tokens_decoder().values() if t.content
        ]
        good = separators(backend)
        bad = "".join(c for c in WHITESPACE if c not in good)
        self._unproven = re.compile(f"[{re.escape(bad)}]") if bad else None
        self._cache: dict[str, tuple[int, ...]] = {}

    def provable(self, block: str) -> bool:
        if self._unproven is not None and self._unproven.search(block):
            return False
        return not any(special in block for special in self.specials)

    def block_starts(self, blocks: Sequence[tuple[int, str]]) -> list[list[int] | None]:
        """Per ``(start, block)``: its tokens' start offsets in the document, or ``None``
        where that block is not ``provable``."""
        plans = [_plan(start, block) if self.provable(block) else None for start, block in blocks]
        cache = self._learn([segment for plan in plans if plan for segment in plan[1]])
        edges = [edge for plan in plans if plan for edge in (plan[0], plan[3]) if edge]
        placed = iter(self._place(edges))
        out: list[list[int] | None] = []
        for plan in plans:
            if plan is None:
                out.append(None)
                continue
            head, middle, middle_starts, _ = plan
            starts = next(placed) if head else []
            rels = list(map(cache.__getitem__, middle))
            at = chain.from_iterable(map(repeat, middle_starts, map(len, rels)))
            starts.extend(map(add, at, chain.from_iterable(rels)))
            starts.extend(next(placed))
            out.append(starts)
        return out

    def _learn(self, segments: list[str]) -> dict[str, tuple[int, ...]]:
        """The cache, holding every one of ``segments``: those not yet in it are tokenized as
        texts of segments (each between two others: a word before the first, a separator and
        a word after the last). A full cache is replaced, not cleared, so a thread that holds
        the old one still finds its segments."""
        cache = self._cache
        if len(cache) > _CACHE_LIMIT:
            cache = self._cache = {}
        new = list(set(segments).difference(cache))
        groups: list[list[str]] = [[]]
        size = 0
        for segment in new:
            if size > _JOINED_CHARS:
                groups.append([])
                size = 0
            groups[-1].append(segment)
            size += len(segment)
        texts = [_BEFORE + "".join(group) + _AFTER for group in groups if group]
        for group, firsts in zip(groups, self._starts(texts), strict=False):
            bounds = list(accumulate(map(len, group), initial=len(_BEFORE)))
            end = bounds[-1] + len(_AFTER)
            tokens = iter(firsts)
            token = next(tokens, end)
            while token < bounds[0]:  # the leading word's tokens
                token = next(tokens, end)
            for segment, lo, hi in zip(group, bounds, bounds[1:], strict=False):
                rel = []
                while token < hi:  # the trailing word's tokens stop it
                    rel.append(token - lo)
                    token = next(tokens, end)
                cache[segment] = tuple(rel)
        return cache

    def _place(self, edges: list[_Edge]) -> list[list[int]]:
        """Absolute token starts of each edge, tokenized in its own context."""
        texts = [
            (_BEFORE if before else "") + piece + (_AFTER if after else "")
            for piece, _, before, after in edges
        ]
        out = []
        for (piece, offset, before, _), firsts in zip(edges, self._starts(texts), strict=True):
            lo = len(_BEFORE) if before else 0
            hi = lo + len(piece)
            out.append([offset + f - lo for f in firsts if lo <= f < hi])
        return out

    def _starts(self, texts: list[str]) -> list[list[int]]:
        """Token start offsets of each text, tokenized on its own."""
        if not texts:
            return []
        encodings = self.backend.encode_batch(texts, add_special_tokens=False)
        return [[s for s, _ in e.offsets] for e in encodings]


# (text, its offset in the document, a word before it, a separator and a word after it)
_Edge = tuple[str, int, bool, bool]


def _plan(start: int, block: str) -> tuple[_Edge | None, list[str], list[int], _Edge]:
    """(head, middle segments, their starts, tail) of one block. The head, a first word with
    no whitespace before it (the tokenizer gives it the marker), is tokenized at the start of
    a text; the tail, the last segment and the block's trailing whitespace, after a word."""
    # trailing whitespace matches no segment; searched for one, every start in the run would
    # scan to its end (quadratic, one C call no deadline stops)
    segments = _SEGMENT.findall(block.rstrip())
    if len(segments) < 3:
        return None, [], [], (block, start, False, False)
    positions = list(accumulate(map(len, segments), initial=start))
    head = None
    if not block[0].isspace():
        head = (segments[0], start, False, True)
        segments, positions = segments[1:], positions[1:]
    tail = (block[positions[-2] - start :], positions[-2], True, False)
    return head, segments[:-1], positions[:-2], tail


def separators(backend: Tokenizer) -> set[str]:
    """The whitespace characters that the normalizer and pre-tokenizer treat as a plain space,
    alone and next to any other such character (so a run of them is one word boundary)."""
    normalizer, pre = backend.normalizer, backend.pre_tokenizer

    def words(probe: str) -> list[str]:
        probe = normalizer.normalize_str(probe) if normalizer else probe
        return [w for w, _ in pre.pre_tokenize_str(probe)] if pre else [probe]

    plain = words("a b")
    found = {c for c in WHITESPACE if words(f"a{c}b") == plain}
    for c in sorted(found):
        if any(words(f"a{c}{d}b") != plain for d in found):
            found.discard(c)
    return found


def is_word_local(backend: Tokenizer | None) -> bool:
    """Whether the tokenizer splits text into words at whitespace and tokenizes each word
    on its own, with the whitespace before a word mapped to its leading marker: then a
    whitespace-bounded slice tokenizes exactly as the same words inside the document.
    Known by its parts (a Metaspace or whitespace pre-tokenizer, a per-word model),
    confirmed on probes for each separator character."""
    if backend is None or not _local_normalizer(backend.normalizer):
        return False
    pre = json.loads(backend.pre_tokenizer.__getstate__()) if backend.pre_tokenizer else {}
    if pre.get("type") == "Metaspace":
        if not pre.get("split") or pre.get("prepend_scheme") != "always":
            return False
    elif pre.get("type") not in ("BertPreTokenizer", "Whitespace", "WhitespaceSplit"):
        return False
    if type(backend.model).__name__ not in ("Unigram", "WordPiece", "BPE"):
        return False
    ids = [e.ids for e in backend.encode_batch_fast(_PROBES, add_special_tokens=False)]
    for space in _PROBE_SPACES:
        for a, b in ((0, 1), (1, 2), (2, 3), (3, 0)):
            joined = backend.encode(_PROBES[a] + space + _PROBES[b], add_special_tokens=False)
            split = len(ids[a])
            if joined.ids != ids[a] + ids[b]:
                return False
            if any(o[0] >= len(_PROBES[a]) for o in joined.offsets[:split]) or any(
                o[0] < len(_PROBES[a]) for o in joined.offsets[split:]
            ):
                return False
    return True


# normalizers that act within a character or a run of spaces, never across a word boundary
_LOCAL_NORMALIZERS = {
    "Precompiled",
    "NFC",
    "NFD",
    "NFKC",
    "NFKD",
    "Lowercase",
    "StripAccents",
    "BertNormalizer",
    "Strip",
    "Nmt",
}


def _local_normalizer(normalizer: Normalizer | None) -> bool:
    if normalizer is None:
        return True
    stack = [json.loads(normalizer.__getstate__())]
    while stack:
        part = stack.pop()
        kind = part.get("type")
        if kind == "Sequence":
            stack.extend(part.get("normalizers", []))
        elif kind == "Replace":  # only the collapse of space runs (XLM-R's)
            if part.get("pattern") != {"Regex": " {2,}"} or part.get("content") != " ":
                return False
        elif kind not in _LOCAL_NORMALIZERS:
            return False
    return True
