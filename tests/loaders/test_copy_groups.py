"""The copies scan compares each pair of files at most once, however many sketch values they
share, and still finds the same groups (the run's start: 58 files, 15 980 -> 1 594 pairs)."""

from __future__ import annotations

from collections import Counter

from ragingest.loaders.cleaning import corpus as corpus_module
from ragingest.loaders.cleaning.corpus import CorpusCleaner

RULE = "Срок выдачи альбомов с красной наклейкой составляет три дня, остальных четырнадцать."


def _word(*numbers: int) -> str:
    """A word of letters only (cleaning compares texts without their digits)."""
    return "".join("абвгдежзик"[int(d)] for n in numbers for d in str(n)) + "ом"


def _text(n: int, own: int) -> str:
    """A memo: 30 paragraphs every memo has, then ``own`` paragraphs of its own."""
    shared = [f"{_word(i)} {RULE} {_word(i, i)} описывает порядок продления." for i in range(30)]
    mine = [" ".join(_word(n, i, k) for k in range(12)) for i in range(own)]
    return "\n\n".join(["# Памятка", *shared, *mine])


def test_each_pair_is_compared_once_and_the_groups_hold(monkeypatch):
    pairs: Counter[frozenset[int]] = Counter()
    real = corpus_module.are_copies

    def counted(a: corpus_module.FileDigest, b: corpus_module.FileDigest) -> bool:
        pairs[frozenset((id(a), id(b)))] += 1
        return real(a, b)

    monkeypatch.setattr(corpus_module, "are_copies", counted)
    cleaner = CorpusCleaner()
    for n in range(3):  # one memo three times, a sentence apart: copies
        cleaner.observe(f"memo{n}.md", [(_text(n, 0) + f"\n\nПодпись {n}.", ())])
    for n in range(3, 7):  # half of each shared: no copies, many sketch values in common
        cleaner.observe(f"memo{n}.md", [(_text(n, 30), ())])

    groups = cleaner.groups

    assert pairs and max(pairs.values()) == 1
    assert groups["memo1.md"] == ("memo0.md", "memo1.md", "memo2.md")
    assert [groups[f"memo{n}.md"] for n in range(3, 7)] == [(f"memo{n}.md",) for n in range(3, 7)]
