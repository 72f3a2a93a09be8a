"""Property tests: chunk offsets index the file as decoded (BOM, CRLF, CR, front matter, NBSP,
mixed line ends, plain-text headings, form feeds), through the text loader and the source map."""

from __future__ import annotations

import random
import re
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragingest.loaders import loader_for
from ragingest.loaders.base import normalize_text
from ragingest.loaders.markdown.plain_headings import heading_edits, text_headings
from ragingest.loaders.markdown.source_map import apply_edits, normalize_edits, normalize_mapped
from ragingest.loaders.markdown.source_offsets import source_map_of, to_source
from ragingest.splitters import HeadingFirstSplitter
from ragingest.splitters.chunk_metadata import chunk_metadata

VOCABULARY = sorted(  # the example documents' words
    {
        word
        for path in (Path(__file__).parents[2] / "examples").glob("*.md")
        for word in re.findall(r"[а-яё]{4,}", path.read_text("utf-8"))
    }
)
WORDS = "правило\u00a0исключение срок выдачи книга rule exception loan 14 т. е. ст. 81".split(" ")
word = st.sampled_from(WORDS)
sentence = st.lists(word, min_size=1, max_size=14).map(lambda ws: " ".join(ws).capitalize() + ".")
paragraph = st.lists(sentence, min_size=1, max_size=6).map(" ".join)
md_heading = st.tuples(st.integers(1, 3), st.lists(word, min_size=1, max_size=3)).map(
    lambda t: "#" * t[0] + " " + " ".join(t[1]).capitalize()
)
txt_heading = st.one_of(
    st.integers(1, 9).map(lambda n: f"{n}. Общие положения"),
    st.integers(1, 9).map(lambda n: f"Глава {n}"),
    st.just("ПРАВИЛА ВЫДАЧИ"),
    st.just("  ОТСТУП С ПРОБЕЛАМИ\u00a0 "),
    st.just("Заголовок\n========="),
    st.just("Подраздел\n---------"),
)
line_end = st.sampled_from(["\n", "\r\n", "\r"])
FRONT = "---\ntitle: Памятка\ndate: 2024-05-01\n---\n"


@st.composite
def source_file(draw, plain: bool) -> tuple[str, str]:
    """(decoded source text, suffix) with mixed line ends, maybe BOM and front matter."""
    heading = txt_heading if plain else md_heading
    blocks = draw(st.lists(st.one_of(paragraph, paragraph, heading), min_size=1, max_size=14))
    text = ""
    for block in blocks:
        text += block + draw(st.sampled_from(["\n", "\n\n", "\n\n\n", "\n\f", "\n\n  \n"]))
    if not plain:
        text = text.replace("\f", "")
        if draw(st.booleans()):
            text = FRONT + text
    ends = draw(st.lists(line_end, min_size=1, max_size=3))
    parts = text.split("\n")
    text = parts[0] + "".join(ends[i % len(ends)] + p for i, p in enumerate(parts[1:]))
    if draw(st.booleans()):
        text = "\ufeff" + text
    return text, ".txt" if plain else ".md"


SPLITTERS = st.sampled_from(
    [
        HeadingFirstSplitter(40, 0, 0, unit="chars"),
        HeadingFirstSplitter(120, 20, 30, unit="chars"),
        HeadingFirstSplitter(400, 0, 100, unit="chars"),
    ]
)


def load_and_split(source: str, suffix: str, splitter: HeadingFirstSplitter):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"doc{suffix}"
        path.write_bytes(source.encode("utf-8"))
        document = next(loader_for(path, folder).lazy_load())
    chunks = splitter.split_chunks(document.page_content)
    metadata, mapped = to_source(document.metadata, chunks)
    return document, chunks, metadata, mapped


def squeeze(text: str) -> str:
    return "".join(text.split())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source_file(plain=False), SPLITTERS)
def test_markdown_chunks_are_exact_spans_of_the_decoded_file(case, splitter):
    source, suffix = case
    _document, chunks, _metadata, mapped = load_and_split(source, suffix, splitter)
    body_start = len(FRONT.replace("\n", "")) if "title: Памятка" in source else 0
    assert len(mapped) == len(chunks)
    for norm, chunk in zip(chunks, mapped, strict=True):
        assert chunk.text == source[chunk.start_index : chunk.end_index]
        assert chunk.start_index >= (1 if source.startswith("\ufeff") else 0) + body_start
        # the embedded form is the normalized one: only line ends differ
        assert normalize_text(chunk.text) == norm.text
        assert chunk.embed_text == norm.embed_text
        parent_start, parent_end = chunk.parent_span
        assert parent_start <= chunk.start_index and chunk.end_index <= parent_end
    covered = set()
    for chunk in mapped:
        covered.update(range(chunk.start_index, chunk.end_index))
    front_end = source.find("---", 4) + 3 if body_start else 0
    for i, ch in enumerate(source):
        if i >= front_end and not ch.isspace() and ch != "\ufeff":
            assert i in covered, (i, source[max(0, i - 10) : i + 10])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source_file(plain=True), SPLITTERS)
def test_plain_text_chunks_are_exact_spans_despite_rewritten_headings(case, splitter):
    source, suffix = case
    _document, chunks, metadata, mapped = load_and_split(source, suffix, splitter)
    underline = re.compile(r"^(=+|-+)\s*$")
    for i, (norm, chunk) in enumerate(zip(chunks, mapped, strict=True)):
        assert chunk.text == source[chunk.start_index : chunk.end_index]
        assert chunk.text.strip() == chunk.text.strip("\ufeff")
        lines = [ln for ln in normalize_text(chunk.text).split("\n") if not underline.match(ln)]
        unmarked = re.sub(r"(?m)^#+ ", "", norm.text)
        assert squeeze("\n".join(lines)) == squeeze(unmarked)
        stored = chunk_metadata(metadata, chunk, i, len(mapped))
        if "page_start" in stored:  # pages count the form feeds of the source
            assert stored["page_start"] == 1 + source[: chunk.start_index].count("\f")
            assert stored["page_end"] == 1 + source[: chunk.end_index - 1].count("\f")
            page_begins = source.rfind("\f", 0, chunk.start_index) + 1
            assert stored["page_char_start"] == chunk.start_index - page_begins
            last_page_begins = source.rfind("\f", 0, chunk.end_index - 1) + 1
            assert stored["page_char_end"] == chunk.end_index - last_page_begins


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab\r\n\ufeff\x00\u00a0 ", max_size=40))
def test_normalize_edits_reproduce_normalize_text(text):
    normalized, mapping = apply_edits(text, normalize_edits(text))
    assert normalized == normalize_text(text)
    assert mapping.length == len(normalized)
    starts = [mapping.start(i) for i in range(len(normalized) + 1)]
    assert starts == sorted(starts)
    for i, ch in enumerate(normalized):  # every character maps to itself or to its line end
        s, e = mapping.span(i, i + 1)
        assert text[s:e] == ch or (ch == "\n" and text[s:e] in ("\r", "\r\n"))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab\r\n\ufeff\x00 ", max_size=40))
def test_bulk_normalize_equals_the_edits(text):
    normalized, mapping = apply_edits(text, normalize_edits(text))
    fast, fast_mapping = normalize_mapped(text)
    assert fast == normalized
    spans = [(s, e) for s in range(len(fast) + 1) for e in range(s, len(fast) + 1)]
    assert [fast_mapping.span(s, e) for s, e in spans] == [mapping.span(s, e) for s, e in spans]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(txt_heading, paragraph, st.just("")), max_size=10))
def test_heading_edits_give_text_headings(lines):
    text = "\n".join(lines)
    edits, found = heading_edits(text)
    assert (apply_edits(text, edits)[0], found) == text_headings(text)


def test_bom_crlf_and_front_matter_example():
    source = "\ufeff---\r\ntitle: Памятка\r\n---\r\n# Выдача\r\n\r\nСрок\u00a0— 14 дней.\r\n"
    splitter = HeadingFirstSplitter(1000, 0, 0, unit="chars")
    document, chunks, _metadata, mapped = load_and_split(source, ".md", splitter)
    assert document.page_content == "# Выдача\n\nСрок\u00a0— 14 дней.\n"
    assert [(c.start_index, c.end_index) for c in chunks] == [(0, 25)]
    assert [(c.start_index, c.end_index) for c in mapped] == [(27, 54)]
    assert mapped[0].text == "# Выдача\r\n\r\nСрок\u00a0— 14 дней."
    assert source_map_of(document.metadata).source == source


def test_plain_text_heading_maps_to_its_words():
    source = (
        "ПРАВИЛА\r\n\r\n  1. Общие положения  \r\n\r\nТекст раздела.\r\n"
        "Подраздел\r\n=====\r\n\r\nЕщё текст."
    )
    splitter = HeadingFirstSplitter(40, 0, 0, unit="chars")
    _document, chunks, _metadata, mapped = load_and_split(source, ".txt", splitter)
    assert [c.text for c in chunks] == [
        "# ПРАВИЛА",
        "### 1. Общие положения\n\nТекст раздела.",
        "## Подраздел\n\nЕщё текст.",
    ]
    assert [c.text for c in mapped] == [
        "ПРАВИЛА",
        "1. Общие положения  \r\n\r\nТекст раздела.",
        "Подраздел\r\n=====\r\n\r\nЕщё текст.",
    ]
    assert [(c.start_index, c.end_index) for c in mapped] == [(0, 7), (13, 51), (53, 83)]


def test_boilerplate_removal_keeps_source_offsets(tmp_path):
    from ragingest.loaders.cleaning.corpus import CorpusCleaner
    from tests.splitting import split_file

    disclaimer = "Информация носит справочный характер и не является публичной офертой."
    corpus = CorpusCleaner()
    sources = {}
    for n in range(4):
        words = random.Random(n).sample(VOCABULARY, 60)  # distinct documents, not copies
        body = f"Правило {n}: срок выдачи {n + 3} дня. " + " ".join(words) + "."
        source = (
            f"\ufeff{disclaimer}\r\n\r\n# Раздел {n}\r\n\r\n{body}\r\n\r\n## Исключение"
            f"\r\n\r\nАльбомы выдают на {n + 1} дня.\r\n\r\n{disclaimer}\r\n"
        )
        path = tmp_path / f"doc{n}.md"
        path.write_bytes(source.encode("utf-8"))
        sources[path] = source
        loaded = loader_for(path, tmp_path).lazy_load()
        corpus.observe(str(path), [(d.page_content, ()) for d in loaded])
    splitter = HeadingFirstSplitter(1000, 0, 0, unit="chars")
    for path, source in sources.items():
        chunks = split_file(path, tmp_path, splitter, corpus=corpus)
        assert chunks.cleaning["boilerplate_paragraphs"] == 2
        for chunk in chunks:
            meta = chunk.metadata
            assert chunk.text == source[meta["start_index"] : meta["end_index"]]
            assert chunk.parent_text == source[meta["parent_start"] : meta["parent_end"]]
            assert disclaimer not in chunk.embed_text
        second = source.index("## Исключение")
        assert [c.metadata["start_index"] for c in chunks] == [source.index("# Раздел"), second]
        assert [disclaimer in c.text for c in chunks] == [False, False]
        # each removal's span is in the source, as inspect shows it
        assert [source[r.start : r.end] for r in chunks.removed] == [disclaimer, disclaimer]


def every_path(source: str, splitter: HeadingFirstSplitter) -> dict[str, tuple[str, list]]:
    """Per way in (a folder's file, a LangChain loader, a Document into ingest, the splitter's
    own ``split_documents``): (the text its offsets must index, [(text, start, end), ...])."""
    from langchain_community.document_loaders import TextLoader as LangChainTextLoader
    from langchain_core.documents import Document

    from ragingest.loaders.markdown.pages import normalize_documents
    from ragingest.pipeline.split import Splitting, records_of
    from ragingest.splitters.factory import SplitSettings

    splitting = Splitting(SplitSettings(), lambda: splitter)

    def ingested(documents) -> list:
        return [
            (r.text, r.metadata["start_index"], r.metadata["end_index"])
            for d in normalize_documents(documents)
            for r in records_of(d, "doc.md", splitting, None)
        ]

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "doc.md"
        path.write_bytes(source.encode("utf-8"))
        file_documents = list(loader_for(path, folder).lazy_load())
        loaded = LangChainTextLoader(str(path), encoding="utf-8").load()
    given = Document(page_content=source, metadata={"source": "doc.md"})
    split = HeadingFirstSplitter.split_documents(splitter, [given])
    return {
        "folder": (source, ingested(file_documents)),
        "loader": (loaded[0].page_content, ingested(loaded)),
        "document": (source, ingested([given])),
        "split_documents": (
            source,
            [(d.page_content, d.metadata["start_index"], d.metadata["end_index"]) for d in split],
        ),
    }


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source_file(plain=False), SPLITTERS)
def test_every_path_indexes_the_text_it_was_given(case, splitter):
    source, _suffix = case
    for path, (text, chunks) in every_path(source, splitter).items():
        assert chunks, path
        body_start = text.find("Памятка\n---") + len("Памятка\n---") if "Памятка" in text else 0
        for chunk_text, start, end in chunks:
            assert text[start:end] == chunk_text, path
            assert start >= body_start, path


def test_front_matter_document_example_from_the_issue():
    from langchain_core.documents import Document

    text = "---\noutline: deep\n---\n\n# Заголовок\n\n## Раздел\n\nПервое правило раздела.\n"
    splitter = HeadingFirstSplitter(1000, 0, 0, unit="chars")
    for path, (_given, chunks) in every_path(text, splitter).items():
        assert [(start, end) for _t, start, end in chunks] == [(23, 70)], path
    chunk = splitter.split_documents([Document(page_content=text, metadata={"source": "x.md"})])
    assert text[chunk[0].metadata["start_index"] : chunk[0].metadata["end_index"]] == (
        chunk[0].page_content
    )
