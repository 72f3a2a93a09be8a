"""Model inputs for a few short texts without loading the whole tokenizer: a query's cold start.

Loading XLM-R's ``tokenizer.json`` costs ~1 s of CPU (building its 250 002-piece Unigram model;
parsing the JSON is a small part), more than importing Chroma. A query needs the pieces of one
short text, so ``SubsetTokenizer`` keeps the vocabulary as a flat cache (pieces and scores, read
in ~0.05 s) and, per text, builds a Unigram tokenizer of only the pieces that occur in it, with
the file's own normalizer, pre-tokenizer, added tokens and post-processor. A piece is looked up
by bisection in the cache's sorted order (a dict of the 250 002 pieces costs ~0.2 s to build:
more than a query's few hundred lookups), and the dict is built once a process has made
``DICT_AFTER`` lookups (long texts, many texts), so no caller pays more than about twice the
cheaper of the two.

Contract: ``model_inputs(text, max_length)`` returns exactly the ids and type ids that the full
tokenizer gives for ``text`` with ``truncation=True, max_length=max_length`` (special tokens
included): a Unigram segmentation of a word only uses pieces that are substrings of it, the
subset keeps every such piece with its score, the unknown piece and the lowest score (the
unknown-character penalty is counted from it), and ids are mapped back to the file's.
``SubsetTokenizer.load`` returns None where that argument does not hold (not a Unigram model
without byte fallback, or a post-processor other than a template): the caller then loads the
full tokenizer.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import pickle
import re
from array import array
from bisect import bisect_right
from pathlib import Path
from typing import Any

_FORMAT = 2  # bump when the cache layout changes
DICT_AFTER = 20_000  # lookups by bisection (~0.2 s) before the dict of every piece is built


def _cache_file(tokenizer_json: Path, cache_root: Path) -> Path:
    stat = tokenizer_json.stat()
    key = f"{_FORMAT}:{tokenizer_json.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"
    return cache_root / "tokenizers" / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.pkl"


def _supported(data: dict[str, Any]) -> bool:
    model = data.get("model") or {}
    post = data.get("post_processor")
    return (
        model.get("type") == "Unigram"
        and not model.get("byte_fallback")
        and model.get("unk_id") is not None
        and (post is None or post.get("type") == "TemplateProcessing")
        and not data.get("truncation")
        and not data.get("padding")
    )


def _build_cache(tokenizer_json: Path, target: Path) -> dict[str, Any] | None:
    data = json.loads(tokenizer_json.read_text(encoding="utf-8"))
    if not _supported(data):
        cached: dict[str, Any] = {"supported": False}
    else:
        vocab = data["model"].pop("vocab")
        data["model"]["vocab"] = []
        pieces = [piece for piece, _ in vocab]
        scores = array("d", (score for _, score in vocab))
        starts = array("I", [0])
        for piece in pieces:
            starts.append(starts[-1] + len(piece) + 1)
        cached = {
            "supported": True,
            "skeleton": data,
            "pieces": "\0".join(pieces),
            "starts": starts,  # piece i is pieces[starts[i]:starts[i + 1] - 1]
            # ids by piece, equal pieces by id (the last of them is the dict's)
            "order": array("I", sorted(range(len(pieces)), key=lambda i: (pieces[i], i))),
            "scores": scores,
            "min_id": scores.index(min(scores)),  # the first lowest, as min(key=)
            "longest": max(map(len, pieces)),
        }
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    with tmp.open("wb") as handle:
        pickle.dump(cached, handle, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, target)  # another process building it too: the same content wins
    return cached


class _Pieces:
    """The vocabulary as the cache holds it: one string, each piece's start, the ids in the
    pieces' sorted order. As a sequence: the pieces in sorted order (what ``bisect`` reads)."""

    def __init__(self, joined: str, starts: array, order: array) -> None:
        self.joined, self.starts, self.order = joined, starts, order

    def piece(self, piece_id: int) -> str:
        return self.joined[self.starts[piece_id] : self.starts[piece_id + 1] - 1]

    def __len__(self) -> int:
        return len(self.order)

    def __getitem__(self, rank: int) -> str:
        return self.piece(self.order[rank])

    def find(self, piece: str) -> int | None:
        rank = bisect_right(self, piece) - 1
        return self.order[rank] if rank >= 0 and self[rank] == piece else None


class SubsetTokenizer:
    """See the module docstring. Thread-safe: each call builds its own small tokenizer."""

    def __init__(self, cached: dict[str, Any]) -> None:
        from tokenizers import Tokenizer

        self.skeleton: dict[str, Any] = cached["skeleton"]
        self.scores: array = cached["scores"]
        self.pieces = _Pieces(cached["pieces"], cached["starts"], cached["order"])
        self._ids: dict[str, int] | None = None  # built after DICT_AFTER lookups
        self._lookups = 0
        self.unk_id = int(self.skeleton["model"]["unk_id"])
        self.min_id: int = cached["min_id"]
        self.longest: int = cached["longest"]
        added = self.skeleton.get("added_tokens") or []
        self.added_ids = [int(t["id"]) for t in added if int(t["id"]) < len(self.scores)]
        post = self.skeleton.get("post_processor") or {}
        for special in post.get("special_tokens", {}).values():
            self.added_ids.extend(int(i) for i in special["ids"])
        contents = sorted((t["content"] for t in added), key=len, reverse=True)
        self._added = re.compile("|".join(map(re.escape, contents))) if contents else None
        base = self._tokenizer_json([self.unk_id, self.min_id, *self.added_ids])[0]
        self.base = Tokenizer.from_str(base)  # the normalizer and pre-tokenizer, for candidates

    @classmethod
    def load(cls, tokenizer_json: Path, cache_root: Path) -> SubsetTokenizer | None:
        """The subset tokenizer of ``tokenizer_json`` (its cache built once under
        ``cache_root``), or None when the file's model is not one it reproduces exactly."""
        target = _cache_file(tokenizer_json, cache_root)
        cached = None
        if target.is_file():
            try:
                with target.open("rb") as handle:
                    cached = pickle.load(handle)
            except Exception:  # a torn or foreign file: build it again
                cached = None
        if cached is None:
            cached = _build_cache(tokenizer_json, target)
        return cls(cached) if cached and cached.get("supported") else None

    @property
    def special_tokens(self) -> int:
        """How many special tokens the model adds to one text."""
        return self.base.num_special_tokens_to_add(False)

    def _candidates(self, text: str) -> set[int]:
        found = {self.unk_id, self.min_id, *self.added_ids}
        segments = [text, *(self._added.split(text) if self._added else [])]
        normalizer = self.base.normalizer
        for segment in segments:
            normalized = normalizer.normalize_str(segment) if normalizer else segment
            words = (
                [w for w, _ in self.base.pre_tokenizer.pre_tokenize_str(normalized)]
                if self.base.pre_tokenizer
                else [normalized]
            )
            for word in words:
                for start in range(len(word)):
                    for end in range(start + 1, min(len(word), start + self.longest) + 1):
                        piece_id = self.piece_id(word[start:end])
                        if piece_id is not None:
                            found.add(piece_id)
        return found

    def piece_id(self, piece: str) -> int | None:
        """The file's id of ``piece`` (of equal pieces the last), or None."""
        if self._ids is None:
            self._lookups += 1
            if self._lookups <= DICT_AFTER:
                return self.pieces.find(piece)
            names = self.pieces.joined.split("\0")
            self._ids = dict(zip(names, range(len(names)), strict=True))  # C loops
        return self._ids.get(piece)

    def _tokenizer_json(self, ids: list[int]) -> tuple[str, list[int]]:
        """A tokenizer.json with only the pieces ``ids`` (file ids), and the file id of each of
        its own ids."""
        chosen = sorted(set(ids))
        local = {file_id: i for i, file_id in enumerate(chosen)}
        data = copy.copy(self.skeleton)
        data["model"] = {
            **self.skeleton["model"],
            "unk_id": local[self.unk_id],
            "vocab": [[self.pieces.piece(i), self.scores[i]] for i in chosen],
        }
        data["added_tokens"] = [
            {**t, "id": local.get(int(t["id"]), int(t["id"]))}
            for t in self.skeleton.get("added_tokens") or []
        ]
        post = self.skeleton.get("post_processor")
        if post:
            post = copy.deepcopy(post)
            for special in post.get("special_tokens", {}).values():
                special["ids"] = [local[i] for i in special["ids"]]
            data["post_processor"] = post
        return json.dumps(data), chosen

    def model_inputs(self, text: str, max_length: int) -> tuple[list[int], list[int]]:
        """``(input_ids, token_type_ids)`` of ``text`` as the full tokenizer gives them, cut
        to ``max_length`` tokens with the special tokens."""
        from tokenizers import Tokenizer

        source, file_ids = self._tokenizer_json(list(self._candidates(text)))
        small = Tokenizer.from_str(source)
        encoding = small.encode(text, add_special_tokens=False)
        encoding.truncate(max(0, max_length - self.special_tokens))
        encoding = small.post_process(encoding, add_special_tokens=True)
        return [file_ids[i] for i in encoding.ids], list(encoding.type_ids)

    def count(self, text: str) -> int:
        """Tokens of ``text`` without special tokens (a prompt's length)."""
        from tokenizers import Tokenizer

        source, _ = self._tokenizer_json(list(self._candidates(text)))
        return len(Tokenizer.from_str(source).encode(text, add_special_tokens=False).ids)
