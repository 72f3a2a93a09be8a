"""The second stage for an answer that opens the next section
(``retrieval.next_section.NextSection``). Deterministic test vectors: each candidate's cosine
to the query (``dense_score``) is a fixed number standing in for the model's."""

from __future__ import annotations

from langchain_core.documents import BaseDocumentCompressor, Document
from langchain_core.embeddings import Embeddings

from ragingest.retrieval.context import fit_budget
from ragingest.retrieval.focus import NeighboursFirst, second_stage
from ragingest.retrieval.next_section import NextSection, opening_after

PROBLEM = "## Ошибка сборки\n\n" + "Сборка падает, когда кеш переполнен. " * 5  # section 1
FIX = "## Решение\n\nЗадайте опцию `cache_limit` в конфигурации. " * 3  # section 2, next


def chunk(
    cid: str,
    start: int,
    end: int,
    section: tuple[int, int, str],
    cosine: float,
    index: int = 0,
    doc: str = "d",
) -> Document:
    """A candidate chunk of file ``doc``: its span, its section's span and path, and its
    test-vector cosine to the query."""
    parent_start, parent_end, path = section
    meta = {
        "doc_id": doc,
        "source": f"{doc}.md",
        "start_index": start,
        "end_index": end,
        "parent_id": f"{doc}:{parent_start}",
        "parent_start": parent_start,
        "parent_end": parent_end,
        "section_path": path,
        "chunk_index": index,
        "chunk_id": cid,
        "dense_score": cosine,
    }
    return Document(id=cid, page_content="x" * (end - start), metadata=meta)


P1 = (0, 400, "Сборка > Ошибка сборки")
P2 = (402, 700, "Сборка > Решение")  # two characters (a blank line) after P1


def candidates(fix_cosine: float = 0.885, fix_section: tuple[int, int, str] = P2) -> list:
    """The problem's last chunk first, four chunks of other files, then the next section's
    opening (the fix)."""
    others = [
        chunk(f"x{i}", 0, 200, (0, 200, f"X{i}"), 0.89 - i / 100, doc=f"o{i}") for i in range(4)
    ]
    return [
        chunk("a1", 200, 400, P1, 0.90, index=1),
        *others,
        chunk("b0", fix_section[0], fix_section[0] + 200, fix_section, fix_cosine, index=2),
    ]


class HeadingVectors(Embeddings):
    """Deterministic test vectors: one axis per keyword, the count of each in the text."""

    words = ("ошибк", "решени", "кеш")

    def _vector(self, text: str) -> list[float]:
        return [float(text.lower().count(w)) for w in self.words]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.seen = [*getattr(self, "seen", []), *texts]
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


def ids(docs) -> list[str]:
    return [d.id for d in docs]


def test_the_opening_of_the_next_section_is_found_after_a_sections_last_chunk():
    found = candidates()
    assert opening_after(found, 0) == 5
    first = chunk("a0", 0, 200, P1, 0.9)  # 200 characters of its section follow it
    assert opening_after([first, *found[1:]], 0, tail=0) is None
    assert opening_after([first, *found[1:]], 0, tail=200) == 5
    same_heading = (402, 700, P1[2])  # a section cut for size, not a new heading
    assert opening_after(candidates(fix_section=same_heading), 0) is None
    assert opening_after(candidates(fix_section=same_heading), 0, heading=False) == 5
    farther = (420, 700, P2[2])  # another section lies between
    assert opening_after(candidates(fix_section=farther), 0) is None
    inside = candidates()
    inside[5].metadata["start_index"] = 500  # the next section's second chunk, not its opening
    assert opening_after(inside, 0) is None
    assert opening_after(found, 1) is None  # another file


def test_an_opening_the_query_points_at_moves_up_behind_its_anchor():
    stage = NextSection(read=1, margin=0.02)
    assert isinstance(stage, BaseDocumentCompressor)
    # 0.885 >= 0.90 - 0.02: moved; 0.87 < 0.88: left where it is
    moved = ["a1", "b0", "x0", "x1", "x2", "x3"]
    assert ids(stage.compress_documents(candidates(0.885), "q")) == moved
    assert ids(stage.compress_documents(candidates(0.87), "q")) == ["a1", *moved[2:], "b0"]


def test_only_the_best_passages_are_read_and_an_opening_without_a_cosine_stays():
    a1, x0, x1, x2, x3, b0 = candidates()
    third = [x0, x1, a1, x2, x3, b0]  # the problem's chunk is the third passage
    assert ids(NextSection(read=2).compress_documents(third, "q")) == ids(third)
    assert ids(NextSection(read=3).compress_documents(third, "q")) == [
        "x0", "x1", "a1", "b0", "x2", "x3"
    ]  # fmt: skip
    del b0.metadata["dense_score"]  # a lexical-only hit: no cosine, not moved
    assert ids(NextSection(read=3).compress_documents(third, "q")) == ids(third)
    assert ids(NextSection(read=3, margin=None).compress_documents(third, "q"))[3] == "b0"


def test_the_budget_then_holds_the_fix_and_nothing_is_dropped():
    found = candidates()
    moved = NextSection(read=1, margin=0.02).compress_documents(found, "q")
    assert sorted(ids(moved)) == sorted(ids(found))
    assert ids(fit_budget(found, 600, len).documents) == ["a1", "x0", "x1"]  # without the stage
    assert ids(fit_budget(moved, 600, len).documents) == ["a1", "b0", "x0"]


class Store:
    """What the stage factory reads of a store: its model."""

    def __init__(self, embeddings: Embeddings | None) -> None:
        self.embeddings = embeddings


def test_named_stages_compose_in_order_as_a_langchain_pipeline():
    stage = second_stage("next-section", Store(HeadingVectors()), None)
    assert isinstance(stage, NextSection) and isinstance(stage.embeddings, HeadingVectors)
    assert second_stage("next-section", Store(None), None) is None  # no model: no stage
    both = second_stage("neighbours+next-section", Store(HeadingVectors()), None)
    assert isinstance(both, BaseDocumentCompressor)
    assert [type(t) for t in both.transformers] == [NeighboursFirst, NextSection]
    found = candidates()
    assert ids(both.compress_documents(found, "q")) == ids(
        stage.compress_documents(NeighboursFirst().compress_documents(found, "q"), "q")
    )


def test_with_the_model_the_query_must_point_at_the_next_heading_not_the_anchors():
    stage = NextSection(embeddings=HeadingVectors(), read=1, margin=None)
    # "решение" reads the next heading ("Решение": 1) over the anchor's ("Ошибка сборки": 0)
    assert ids(stage.compress_documents(candidates(0.5), "какое решение?"))[:2] == ["a1", "b0"]
    # "ошибка" reads the anchor's heading: the opening stays where it was, whatever its cosine
    assert ids(stage.compress_documents(candidates(0.99), "какая ошибка?"))[-1] == "b0"
    # each heading (the last part of the path) is embedded once, then read from memory
    stage.compress_documents(candidates(), "какое решение?")
    assert stage.embeddings.seen == ["Решение", "Ошибка сборки"]
