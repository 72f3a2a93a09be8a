"""Cleaning across the files of a run (``loaders.cleaning.corpus``): copies are kept whole and
named, boilerplate is only what repeats at the margins of distinct documents, never structure, never
a large share of a document, each removal listed with its rule; ``inspect --corpus`` cleans
as ingest does. (Before, three copies of the example regulation kept 180 of 2 134 characters
each, and a console block repeated in 8 files lost its closing fence, so the rest of each file
read as code.)"""

from __future__ import annotations

import json
import random
import re
import shutil
from pathlib import Path

import pytest

from ragingest.cli.inspect import inspect_file
from ragingest.cli.main import main
from ragingest.loaders.cleaning.rules import CleaningRules
from ragingest.pipeline.plan import make_plan, scan_corpus
from ragingest.pipeline.split import Splitting
from ragingest.splitters.factory import SplitSettings
from ragingest.splitters.heading_first import HeadingFirstSplitter
from ragingest.vectorstore.chroma.store import chroma_client
from tests.helpers import ingest_cli
from tests.splitting import split_file

EXAMPLE = Path(__file__).parents[2] / "examples" / "regulation_service.pdf"
DISCLAIMER = "Материал носит справочный характер и не является публичной офертой компании."
CONSOLE = (
    "```console\n$ uvicorn main:app --reload\n\n"
    "INFO:     Uvicorn running on http://127.0.0.1:8000 (Press CTRL+C to quit)\n```"
)
TOPICS = ["маршруты", "зависимости", "валидация", "шаблоны", "тесты", "сессии", "логи", "кэш"]


def splitter() -> HeadingFirstSplitter:
    return HeadingFirstSplitter(400, 0, 0, unit="chars")


def split_all(root: Path, rules: CleaningRules | None = None) -> dict[str, object]:
    """Each file of ``root`` split as a run over ``root`` splits it (the corpus scan first)."""
    tasks = make_plan([root], {}).tasks
    corpus = scan_corpus(tasks, rules or CleaningRules())
    return {t.source: split_file(t.path, root, splitter(), corpus=corpus) for t in tasks}


EXAMPLES = Path(__file__).parents[2] / "examples"
WORDS = sorted(  # a vocabulary of a few hundred words: the example documents'
    {w for p in EXAMPLES.glob("*.md") for w in re.findall(r"[а-яё]{4,}", p.read_text("utf-8"))}
)


def prose(seed: int, sentences: int = 6) -> str:
    """Sentences of words in an order of their own: distinct documents' text."""
    words = random.Random(seed).sample(WORDS, 6 * sentences)
    return " ".join(f"{' '.join(words[k : k + 6]).capitalize()}." for k in range(0, len(words), 6))


def guide(n: int, topic: str) -> str:
    """A FastAPI-like page: a console block mid-page, sections after it, a disclaimer last."""
    body = prose(n)
    return (
        f"# Руководство: {topic}\n\n{body}\n\nЗапустите сервер:\n\n{CONSOLE}\n\n"
        f"## Проверка: {topic}\n\nОткройте страницу и проверьте ответ про {topic}.\n\n"
        f"### Подробности: {topic}\n\nЕщё текст о теме {topic}, шаг {n}.\n\n{DISCLAIMER}\n"
    )


def test_copies_of_a_document_keep_all_their_text_and_are_named(tmp_path):
    for folder in ("a", "b", "c"):
        (tmp_path / folder).mkdir()
        shutil.copy(EXAMPLE, tmp_path / folder / EXAMPLE.name)
    alone = split_file(tmp_path / "a" / EXAMPLE.name, tmp_path, splitter())
    kept = split_all(tmp_path)
    for source, chunks in kept.items():
        assert [c.text for c in chunks] == [c.text for c in alone]  # nothing removed
        assert chunks.cleaning["boilerplate_paragraphs"] == 0
        others = sorted(Path(p).parent.name for p in chunks.copies)
        assert others == sorted({"a", "b", "c"} - {Path(source).parent.name})
        assert {r.rule for r in chunks.removed} == {"headers_footers", "page_numbers", "toc"}
    assert sum(len(c.text) for c in alone) > 2000  # before: 180 of 2 134 characters per copy


def test_versions_that_differ_in_a_sentence_keep_both_sentences(tmp_path):
    rules = [f"Правило {k}: заявку рассматривают в течение {k + 2} рабочих дней." for k in range(6)]
    one, two = "Срок хранения архива — пять лет.", "Срок хранения архива — семь лет."
    for folder, changed in [("a", one), ("b", two), ("c", one), ("d", one)]:
        (tmp_path / folder).mkdir()
        text = "# Регламент\n\n" + "\n\n".join([*rules[:3], changed, *rules[3:]]) + "\n"
        (tmp_path / folder / "reg.md").write_text(text, encoding="utf-8")
    kept = split_all(tmp_path)
    stored = {source: "".join(c.text for c in chunks) for source, chunks in kept.items()}
    assert one in stored["a/reg.md"] and two in stored["b/reg.md"]
    assert all(all(rule in text for rule in rules) for text in stored.values())
    assert sorted(kept["b/reg.md"].copies) == sorted(
        str(tmp_path / f / "reg.md") for f in ("a", "c", "d")
    )


def misread(text: str, seed: int, rate: float = 0.04) -> str:
    """``text`` with ``rate`` of its letters misread, as OCR does."""
    chance = random.Random(seed)
    return "".join(
        chance.choice("оеаинт") if ch.isalpha() and chance.random() < rate else ch for ch in text
    )


def test_four_ocr_readings_of_one_memo_are_copies_and_keep_its_rule(tmp_path):
    rule = "Альбомы с красной наклейкой выдают на три дня и не продлевают никогда."
    for n in range(4):  # each reading misreads other letters; the rule came out the same
        body = "\n\n".join(misread(prose(100 + k), seed=10 * n + k) for k in range(4))
        (tmp_path / f"scan{n}.md").write_text(f"{body}\n\n{rule}\n", encoding="utf-8")
    kept = split_all(tmp_path)
    for n in range(4):
        chunks = kept[f"scan{n}.md"]
        assert rule in "".join(c.text for c in chunks)  # before: gone from all four
        assert len(chunks.copies) == 3


def test_a_repeated_console_block_is_no_boilerplate_and_keeps_its_fence(tmp_path):
    for n, topic in enumerate(TOPICS):
        (tmp_path / f"page{n}.md").write_text(guide(n, topic), encoding="utf-8")
    kept = split_all(tmp_path)
    for n, topic in enumerate(TOPICS):
        chunks = kept[f"page{n}.md"]
        text = "".join(c.text for c in chunks)
        assert CONSOLE in text  # the whole block, its closing fence included
        paths = {c.metadata["section_path"] for c in chunks}
        assert f"Руководство: {topic} > Проверка: {topic} > Подробности: {topic}" in paths
        # the disclaimer at the end of 8 distinct pages is boilerplate: removed and listed
        assert DISCLAIMER not in text
        [removal] = [r for r in chunks.removed if r.rule == "boilerplate"]
        source = (tmp_path / f"page{n}.md").read_text(encoding="utf-8")
        assert (removal.text, source[removal.start : removal.end]) == (DISCLAIMER, DISCLAIMER)


def test_a_section_shared_by_distinct_documents_keeps_its_text(tmp_path):
    intro = "Заявку на пропуск подают за сутки через портал, указывая номер договора."
    for n, topic in enumerate(TOPICS[:4]):
        body = f"Документ о теме «{topic}» описывает порядок работы отдела, шаг {n}. " * 6
        text = f"# {topic}\n\n{body}\n\n## Пропуска\n\n{intro}\n"  # the section, last
        (tmp_path / f"doc{n}.md").write_text(text, encoding="utf-8")
    kept = split_all(tmp_path)
    assert all(intro in "".join(c.text for c in chunks) for chunks in kept.values())
    assert all(not chunks.removed for chunks in kept.values())


def test_boilerplate_is_never_a_large_share_of_a_document(tmp_path):
    for n, topic in enumerate(TOPICS[:4]):  # the disclaimer is most of these short notes
        (tmp_path / f"note{n}.md").write_text(f"Заметка про {topic}.\n\n{DISCLAIMER}\n", "utf-8")
    kept = split_all(tmp_path)
    assert all(DISCLAIMER in "".join(c.text for c in chunks) for chunks in kept.values())
    assert all(not chunks.removed for chunks in kept.values())


def test_inspect_with_the_corpus_cleans_as_ingest_does(tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    for n, topic in enumerate(TOPICS[:4]):
        (docs / f"page{n}.md").write_text(guide(n, topic), encoding="utf-8")
    shutil.copy(docs / "page0.md", docs / "page0 (copy).md")
    ingested = split_all(docs)["page1.md"]
    splitting = Splitting(SplitSettings(), splitter, cleaning=CleaningRules())
    shown = inspect_file(docs / "page1.md", splitting, corpus=docs)
    assert [row["text"] for row in shown["chunks"]] == [c.text for c in ingested]
    assert [r["text"] for r in shown["removed"]] == [DISCLAIMER]
    alone = inspect_file(docs / "page1.md", splitting)
    assert alone["removed"] == [] and DISCLAIMER in alone["chunks"][-1]["text"]
    copies = inspect_file(docs / "page0.md", splitting, corpus=docs)["copies"]
    assert copies == [str(docs / "page0 (copy).md")]
    capsys.readouterr()
    assert main(["inspect", str(docs / "page2.md"), "--corpus", str(docs)]) == 0
    out = capsys.readouterr().out
    assert f"  boilerplate [{guide(2, TOPICS[2]).index(DISCLAIMER)}, " in out


@pytest.mark.slow
def test_the_run_report_names_copies_and_removals(tmp_path):
    """End to end (the real model): the report's groups of copies and per-file removals;
    every copy's chunks are stored, each under its own source."""
    docs = tmp_path / "docs"
    for folder in ("a", "b"):
        (docs / folder).mkdir(parents=True)
        shutil.copy(EXAMPLE, docs / folder / EXAMPLE.name)
    for n, topic in enumerate(TOPICS[:3]):
        (docs / f"page{n}.md").write_text(guide(n, topic), encoding="utf-8")
    report = tmp_path / "report.json"
    assert ingest_cli(docs, tmp_path / "db", "kbase", "--report", report) == 0
    data = json.loads(report.read_text("utf-8"))
    assert data["copies"] == [[f"a/{EXAMPLE.name}", f"b/{EXAMPLE.name}"]]
    files = {f["path"]: f for f in data["files"]}
    assert [r["text"] for r in files["page0.md"]["removed"]] == [DISCLAIMER]
    assert files["page0.md"]["removed"][0]["rule"] == "boilerplate"
    pdf = files[f"a/{EXAMPLE.name}"]  # the loader's removals came through the parser worker
    assert {r["rule"] for r in pdf["removed"]} == {"headers_footers", "page_numbers", "toc"}
    assert pdf["copies"] == [f"b/{EXAMPLE.name}"]
    # each copy is stored; the embedding cache computes the copy's texts once
    copy = files[f"b/{EXAMPLE.name}"]
    assert copy["chunks"] == pdf["chunks"] > 0
    chunks = sum(f["chunks"] for f in data["files"])
    assert data["embeddings_computed"] == chunks - copy["chunks"]
    stored = chroma_client(tmp_path / "db").get_collection("kbase").get(include=["documents",
                                                                              "metadatas"])
    for folder in ("a", "b"):
        texts = [d for d, m in zip(stored["documents"], stored["metadatas"], strict=True)
                 if m["source"] == f"{folder}/{EXAMPLE.name}"]  # fmt: skip
        assert sum(len(t) for t in texts) > 2000
