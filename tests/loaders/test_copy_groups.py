"""The corpus scan compares two files once, however many sketch values they share: documents
with a common section share each of its blocks' digests, and each shared value used to compare
the pair again (58 files: 16 000 comparisons for 1 653 pairs). The groups are the same."""

from __future__ import annotations

from ragingest.loaders.cleaning import corpus
from ragingest.loaders.cleaning.corpus import CorpusCleaner

SHARED = "\n\n".join(
    f"Пункт {n}: пропуск продлевают в бюро пропусков, с паспортом и справкой {n}."
    for n in range(12)
)


WORDS = {
    "a": "склад заказ доставка возврат клиент оплата курьер пункт выдачи срок товар магазин",
    "b": "менеджер заявка договор счёт накладная упаковка гарантия ремонт обмен скидка акция",
    "c": "order delivery refund invoice warehouse parcel courier pickup return policy shelf",
}


def _document(name: str) -> str:
    words = WORDS[name].split()
    own = "\n\n".join(
        " ".join(words[(n * 7 + k * 3) % len(words)] for k in range(30)) + "." for n in range(12)
    )
    return f"# Памятка {name}\n\n{SHARED}\n\n{own}\n"


def test_files_sharing_a_section_are_compared_once_each_and_copies_still_found(monkeypatch):
    compared: list[tuple[int, int]] = []  # the two files' digests (one object per file)
    real = corpus.are_copies

    def counted(a: corpus.FileDigest, b: corpus.FileDigest) -> bool:
        compared.append((id(a), id(b)))
        return real(a, b)

    monkeypatch.setattr(corpus, "are_copies", counted)
    cleaner = CorpusCleaner()
    texts = {name: _document(name) for name in ("a", "b", "c")}
    texts["a copy"] = texts["a"]
    for name, text in texts.items():
        cleaner.observe(name, [(text, ())])
    assert cleaner.groups == {"a": ("a", "a copy"), "a copy": ("a", "a copy"),
                              "b": ("b",), "c": ("c",)}  # fmt: skip
    assert len(compared) == len(set(compared)) <= 6  # each pair at most once
