"""Real langchain-community loaders, offline, through ``loaders.markdown.pages.normalize_documents``
and ``HeadingFirstSplitter.split_documents``: pages joined, running headers/footers, page numbers
and the contents cleaned, front matter as metadata, elements rendered as Markdown."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest
from langchain_core.documents import Document

from ragingest.loaders import loader_for
from ragingest.loaders.markdown.pages import normalize_documents
from ragingest.schema import validate
from ragingest.splitters import HeadingFirstSplitter
from tests import docbuilders as b

warnings.filterwarnings(
    "ignore", message=".*langchain-community.*sunset", category=DeprecationWarning
)
community = pytest.importorskip("langchain_community.document_loaders")


@pytest.fixture(scope="module")
def pdf(tmp_path_factory) -> Path:
    return b.build_pdf(tmp_path_factory.mktemp("pdf") / "regulation.pdf")


@pytest.fixture(scope="module")
def joined_pdf(pdf) -> Document:
    pages = community.PyPDFLoader(str(pdf)).load()
    assert [p.metadata["page"] for p in pages] == [0, 1, 2]
    (document,) = normalize_documents(pages)
    return document


def test_pypdf_pages_become_one_clean_document(joined_pdf, pdf):
    text, metadata = joined_pdf.page_content, joined_pdf.metadata
    assert metadata["source"] == str(pdf)
    assert metadata["title"] == b.PDF_TITLE
    assert metadata["author"] == "Отдел качества"
    assert metadata["doc_date"] == "2026-02-10T09:30:00+00:00"
    assert metadata["pages"] == 3
    assert "page" not in metadata and "page_label" not in metadata
    assert b.PDF_HEADER not in text
    assert not re.search(r"Стр\. \d", text)
    assert "Содержание" not in text and "....." not in text
    assert metadata["_cleaning"]["header_footer_lines"] == 3
    assert metadata["_cleaning"]["page_numbers"] == 3
    assert metadata["_cleaning"]["toc_lines"] == 5
    assert text.startswith(f"# {b.PDF_TITLE}\n\n## 1. Общие положения\n\n")
    for level, title, paragraphs in b.PDF_SECTIONS:
        assert f"\n{'#' * (level + 2)} {title}\n\n" in text
        for paragraph in paragraphs:
            assert f"\n\n{paragraph.strip()}\n" in text, paragraph[:40]
    assert validate({k: v for k, v in metadata.items() if not k.startswith("_")}) == [
        "missing section_path",
        "missing chunk_index",
        "missing total_chunks",
        "missing start_index",
        "missing end_index",
        "missing token_count",
        "missing strategy",
        "missing oversized",
        "missing content_hash",
        "missing parent_id",
        "missing parent_start",
        "missing parent_end",
    ]


def test_page_break_inside_a_paragraph_is_no_boundary(joined_pdf):
    text, page_map = joined_pdf.page_content, joined_pdf.metadata["_page_map"]
    assert [page for _offset, page in page_map] == [1, 2, 3]
    sentence = "Линия поддержки — группа сотрудников с одинаковыми полномочиями."
    start = text.index(sentence)
    page3 = page_map[2][0]
    assert start < page3 < start + len(sentence)
    assert text[page3:].startswith("сотрудников с одинаковыми полномочиями.")
    assert text[page_map[1][0] :].startswith("## 1. Общие положения")


def test_split_documents_joins_pages_and_gives_page_ranges(pdf, joined_pdf):
    splitter = HeadingFirstSplitter(400, 0, 50, unit="chars")
    chunks = splitter.split_documents(community.PyPDFLoader(str(pdf)).load())
    text = joined_pdf.page_content
    assert len({c.metadata["doc_id"] for c in chunks}) == 1
    for chunk in chunks:
        start, end = chunk.metadata["start_index"], chunk.metadata["end_index"]
        assert chunk.page_content == text[start:end]
        assert not re.fullmatch(r"(Стр\. )?\d+", chunk.page_content)
        assert 1 <= chunk.metadata["page_start"] <= chunk.metadata["page_end"] <= 3
    crossing = next(c for c in chunks if "Линия поддержки — группа сотрудников" in c.page_content)
    assert (crossing.metadata["page_start"], crossing.metadata["page_end"]) == (2, 3)
    assert [c.metadata["page_start"] for c in chunks] == sorted(
        c.metadata["page_start"] for c in chunks
    )


def test_text_loader_front_matter_becomes_metadata(tmp_path):
    path = tmp_path / "rules.md"
    path.write_text(
        "---\ntitle: Правила библиотеки\ndate: 2026-03-01\nauthor: Иванов\n---\n"
        "# Правила\n\nКнигу выдают на 14 дней.\n",
        encoding="utf-8",
    )
    (document,) = normalize_documents(community.TextLoader(str(path), encoding="utf-8").load())
    assert document.page_content == "# Правила\n\nКнигу выдают на 14 дней.\n"
    assert document.metadata["title"] == "Правила библиотеки"
    assert document.metadata["doc_date"] == "2026-03-01"
    assert document.metadata["author"] == "Иванов"
    assert document.metadata["file_type"] == "md"
    assert document.metadata["language"] == "ru"
    chunks = HeadingFirstSplitter(200, 0, 0, unit="chars").split_documents(
        community.TextLoader(str(path), encoding="utf-8").load()
    )
    assert [c.page_content for c in chunks] == ["# Правила\n\nКнигу выдают на 14 дней."]
    assert "---" not in chunks[0].page_content


def test_text_loader_plain_text_gets_heading_detection(tmp_path):
    path = tmp_path / "order.txt"
    path.write_text(
        "ПРИКАЗ О ВЫДАЧЕ\n\n1. Общие правила\n\nКниги выдают на две недели.\n\n"
        "2. Продление\n\nПродлить можно один раз.\n",
        encoding="utf-8",
    )
    (document,) = normalize_documents(community.TextLoader(str(path), encoding="utf-8").load())
    assert document.page_content == (
        "# ПРИКАЗ О ВЫДАЧЕ\n\n## 1. Общие правила\n\nКниги выдают на две недели.\n\n"
        "## 2. Продление\n\nПродлить можно один раз.\n"
    )


def test_csv_rows_stay_separate_documents_with_own_ids(tmp_path):
    path = tmp_path / "catalogue.csv"
    path.write_text("name,price\nКнига,500\nАльбом,900\n", encoding="utf-8")
    documents = normalize_documents(community.CSVLoader(str(path), encoding="utf-8").load())
    assert [d.page_content for d in documents] == [
        "name: Книга\nprice: 500",
        "name: Альбом\nprice: 900",
    ]
    assert [d.metadata["row"] for d in documents] == [0, 1]
    assert len({d.metadata["doc_id"] for d in documents}) == 2
    assert {d.metadata["source"] for d in documents} == {str(path)}


@pytest.mark.slow
def test_html_loaders(tmp_path):
    path = b.build_html(tmp_path / "page.html")
    (plain,) = normalize_documents(
        community.BSHTMLLoader(str(path), get_text_separator="\n").load()
    )
    assert plain.metadata["file_type"] == "html"
    assert plain.metadata["title"] == "Справка: личный кабинет"
    elements = community.UnstructuredHTMLLoader(str(path), mode="elements")
    from ragingest.loaders.inputs.source_items import split_sources

    _paths, (source,) = split_sources([elements])  # sets unstructured up offline
    (task,) = source.tasks()
    (document,) = task.documents
    ours = next(loader_for(path).lazy_load())
    assert document.page_content == ours.page_content
    assert document.metadata["title"] == "Личный кабинет"  # the H1: elements carry no <title>


def test_directory_loader_gives_one_document_per_file(tmp_path):
    (tmp_path / "a.md").write_text("# А\n\nПервый.\n", encoding="utf-8")
    (tmp_path / "b.md").write_text("---\ntitle: Бэ\n---\nВторой.\n", encoding="utf-8")
    loader = community.DirectoryLoader(
        str(tmp_path),
        glob="*.md",
        loader_cls=community.TextLoader,
        loader_kwargs={"encoding": "utf-8"},
    )
    documents = sorted(normalize_documents(loader.load()), key=lambda d: d.metadata["source"])
    assert [
        (Path(d.metadata["source"]).name, d.metadata["title"], d.page_content) for d in documents
    ] == [
        ("a.md", "a", "# А\n\nПервый.\n"),
        ("b.md", "Бэ", "Второй.\n"),
    ]


def test_our_own_documents_pass_through(tmp_path, pdf):
    ours = list(loader_for(pdf).lazy_load())
    assert normalize_documents(ours) == ours
