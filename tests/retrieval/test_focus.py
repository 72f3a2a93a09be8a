"""The second stage (``retrieval.focus.SectionFocus``): units of the matched sections, scored
against the query, inserted after their section's best passage. Deterministic test vectors
stand in for the model (a keyword's axis), then the real model through the retriever."""

from __future__ import annotations

import shutil

import pytest
from langchain_core.documents import BaseDocumentCompressor, Document
from langchain_core.embeddings import Embeddings

import ragingest
from ragingest.retrieval.context import fit_budget
from ragingest.retrieval.focus import NeighboursFirst, SectionFocus, units
from tests.conftest import memo_path
from tests.helpers import ingest_cli

SECTION = (
    "## Выдача\n\nКниги выдают на две недели.\n\n- Альбомы не выдают.\n- Журналы выдают на "
    "три дня, кроме свежих номеров.\n\nПродлить срок можно один раз. Штраф за просрочку "
    "начисляют за каждый день.\n"
)
OFFSET = 1000  # the section's place in its file


class KeywordVectors(Embeddings):
    """Deterministic test vectors: one axis per keyword, the count of each in the text."""

    words = ("журнал", "штраф", "альбом", "книг")

    def _vector(self, text: str) -> list[float]:
        low = text.lower()
        return [float(low.count(w)) for w in self.words]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.seen = [*getattr(self, "seen", []), *texts]
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


def passage(start: int, end: int, parent: str = "s1", cid: str = "c1") -> Document:
    meta = {
        "doc_id": "d",
        "source": "d.md",
        "start_index": OFFSET + start,
        "end_index": OFFSET + end,
        "parent_id": parent,
        "parent_start": OFFSET,
        "parent_end": OFFSET + len(SECTION),
        "chunk_id": cid,
        "section_path": "Выдача",
    }
    return Document(page_content=SECTION[start:end], metadata=meta)


def sections(key: str) -> Document | None:
    return Document(page_content=SECTION) if key == "s1" else None


def test_units_are_paragraphs_and_list_items_as_exact_spans():
    spans = units(SECTION)
    assert [SECTION[a:b] for a, b in spans] == [  # the title alone is under MIN_UNIT
        "Книги выдают на две недели.",
        "- Альбомы не выдают.",
        "- Журналы выдают на три дня, кроме свежих номеров.",
        "Продлить срок можно один раз. Штраф за просрочку начисляют за каждый день.",
    ]
    long = "Первое предложение здесь. " * 20
    assert [long[a:b] for a, b in units(long)] == ["Первое предложение здесь."] * 20


def test_the_unit_that_answers_is_inserted_after_its_sections_best_passage():
    head = passage(0, 38)  # the section's head: the title and the first paragraph
    other = passage(0, 10, parent="s2", cid="c9")
    focus = SectionFocus(sections=sections, embeddings=KeywordVectors(), pick=1)
    assert isinstance(focus, BaseDocumentCompressor)
    out = focus.compress_documents([head, other], "на сколько выдают журналы?")
    assert [d.page_content for d in out] == [
        SECTION[0:38],
        "- Журналы выдают на три дня, кроме свежих номеров.",
        SECTION[0:10],
    ]
    unit = out[1]
    start = unit.metadata["start_index"]
    assert SECTION[start - OFFSET : unit.metadata["end_index"] - OFFSET] == unit.page_content
    assert "chunk_id" not in unit.metadata and unit.metadata["parent_id"] == "s1"
    # the embedded unit carries its section's path, as a chunk's breadcrumb does
    assert "Выдача\n- Журналы выдают на три дня, кроме свежих номеров." in focus.embeddings.seen


def test_what_a_better_passage_holds_is_not_added_again_and_no_section_passes_through():
    whole = passage(0, len(SECTION))
    focus = SectionFocus(sections=sections, embeddings=KeywordVectors())
    assert focus.compress_documents([whole], "штраф") == [whole]
    lost = passage(0, 10, parent="gone")
    assert focus.compress_documents([lost], "штраф") == [lost]


def test_a_unit_next_to_a_taken_passage_joins_it_within_the_budget():
    head = passage(0, 38)
    focus = SectionFocus(sections=sections, embeddings=KeywordVectors(), pick=1)
    found = focus.compress_documents([head], "альбомы")
    end = SECTION.index("выдают.") + len("выдают.")
    context = fit_budget(found, end, len, sections)  # no room for a sentence more
    assert [d.page_content for d in context.documents] == [SECTION[:end]]


@pytest.mark.slow
@pytest.mark.model
def test_the_retriever_option_adds_exact_slices_of_the_file(tmp_path):
    (tmp_path / "src").mkdir()
    shutil.copy(memo_path(), tmp_path / "src" / "library_memo.md")
    sizes = ("--chunk-size", "40", "--min-chunk-size", "10")
    assert ingest_cli(tmp_path / "src", tmp_path / "db", "memo", *sizes) == 0
    text = memo_path().read_text(encoding="utf-8")
    query = "На сколько дней выдают альбом с красной наклейкой?"
    default = ragingest.retriever(tmp_path / "db", "memo", k=8, max_context_tokens=120)
    assert default.second_stage == "next-section"
    stages = ("sentences", "neighbours", "next-section", "neighbours+next-section", None)
    for stage in (*stages, NeighboursFirst(depth=4)):
        found = ragingest.retriever(
            tmp_path / "db", "memo", k=8, max_context_tokens=120, second_stage=stage
        ).invoke(query)
        assert found
        for doc in found:
            meta = doc.metadata
            assert text[meta["start_index"] : meta["end_index"]] == doc.page_content
    with pytest.raises(ValueError, match="second_stage must be 'sentences'"):
        ragingest.retriever(tmp_path / "db", "memo", max_context_tokens=120, second_stage="x")


def test_the_best_passages_neighbours_in_its_section_move_up_behind_it():
    def hit(cid: str, index: int, parent: str = "s1") -> Document:
        meta = {"chunk_id": cid, "chunk_index": index, "parent_id": parent}
        return Document(page_content=cid, metadata=meta)

    ranked = [hit("a", 5), hit("b", 1, "s2"), hit("c", 9), hit("d", 6), hit("e", 4, "s3")]
    moved = NeighboursFirst().compress_documents(ranked, "q")
    # d is a's neighbour in its section; e is next to it by index but in another section
    assert [d.page_content for d in moved] == ["a", "d", "b", "c", "e"]
    assert NeighboursFirst(depth=3).compress_documents(ranked, "q") == ranked
    assert NeighboursFirst().compress_documents([], "q") == []
