"""Every examples/ file through the split stage: a stored chunk's text is exactly the indexed
text at its offsets (the file as decoded for text formats, the loader's normalized Markdown
for converted ones), and so is its parent section."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragingest.loaders import loader_for, walk
from ragingest.loaders.formats.text import decode
from ragingest.splitters import HeadingFirstSplitter
from tests.conftest import EXAMPLES
from tests.splitting import split_file

TEXT_FORMATS = (".md", ".markdown", ".txt", ".text")
FILES = sorted(walk([EXAMPLES]), key=lambda found: found.source)


@pytest.fixture(scope="module")
def splitter(e5_info) -> HeadingFirstSplitter:
    return HeadingFirstSplitter(
        tokenizer=e5_info.tokenizer, max_embed_tokens=e5_info.max_embed_tokens
    )


def indexed_texts(path: Path, root: Path) -> list[str]:
    """The texts offsets may index: the decoded file, or each loaded document's Markdown."""
    if path.suffix.lower() in TEXT_FORMATS:
        return [decode(path.read_bytes(), path, keep_bom=True)]
    return [document.page_content for document in loader_for(path, root).lazy_load()]


def test_every_example_is_checked():
    assert {found.path.suffix for found in FILES} >= {".md", ".pdf", ".docx", ".html", ".eml"}


@pytest.mark.parametrize("found", FILES, ids=lambda found: found.source)
def test_stored_chunks_are_exact_spans(found, splitter):
    texts = indexed_texts(found.path, found.root)
    chunks = split_file(found.path, found.root, splitter)
    assert chunks
    for chunk in chunks:
        meta = chunk.metadata
        start, end = meta["start_index"], meta["end_index"]
        homes = [t for t in texts if t[start:end] == chunk.text]
        assert homes, (found.source, start, end, chunk.text[:60])
        assert any(t[meta["parent_start"] : meta["parent_end"]] == chunk.parent_text for t in homes)
        assert chunk.text == chunk.text.strip()


def test_front_matter_counts_in_the_offsets(splitter):
    path = EXAMPLES / "regulation_returns.md"
    source = decode(path.read_bytes(), path, keep_bom=True)
    body = source.index("\n---\n") + len("\n---\n")
    chunks = split_file(path, EXAMPLES, splitter)
    assert chunks[0].metadata["start_index"] == source.index("#", body)
    assert chunks[0].text == source[body:].lstrip()[: len(chunks[0].text)]


@pytest.mark.parametrize(
    "found",
    [f for f in FILES if f.path.suffix in TEXT_FORMATS],
    ids=lambda found: found.source,
)
def test_text_examples_with_bom_and_crlf_keep_exact_offsets(found, splitter, tmp_path):
    """The same file saved by a Windows editor: BOM and CRLF; same chunks, source offsets."""
    original = split_file(found.path, found.root, splitter)
    source = "\ufeff" + decode(found.path.read_bytes(), found.path).replace("\n", "\r\n")
    copy = tmp_path / found.path.name
    copy.write_bytes(source.encode("utf-8"))
    chunks = split_file(copy, tmp_path, splitter)
    assert [c.text.replace("\r\n", "\n") for c in chunks] == [c.text for c in original]
    for chunk in chunks:
        start, end = chunk.metadata["start_index"], chunk.metadata["end_index"]
        assert chunk.text == source[start:end]
        assert start >= 1
        parent = source[chunk.metadata["parent_start"] : chunk.metadata["parent_end"]]
        assert parent == chunk.parent_text


@pytest.mark.parametrize(
    "found",
    [f for f in FILES if f.path.suffix in (".pdf", ".docx")],
    ids=lambda found: found.source,
)
def test_converted_chunks_point_into_their_pages(found, splitter):
    """page_start/page_end and the char range inside them locate the chunk in the page."""
    (document,) = loader_for(found.path, found.root).lazy_load()
    page_at = {}
    for offset, page in document.metadata["_page_map"]:
        page_at.setdefault(page, offset)
    chunks = split_file(found.path, found.root, splitter)
    assert any(c.metadata["page_start"] != c.metadata["page_end"] for c in chunks)
    for chunk in chunks:
        meta = chunk.metadata
        assert page_at[meta["page_start"]] + meta["page_char_start"] == meta["start_index"]
        assert page_at[meta["page_end"]] + meta["page_char_end"] == meta["end_index"]


def test_inspect_json_gives_the_normalized_markdown(capsys):
    import json

    from ragingest.cli.main import main

    path = EXAMPLES / "regulation_returns.md"
    assert main(["inspect", str(path), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    (described,) = result["documents"]
    normalized = next(loader_for(path, EXAMPLES).lazy_load()).page_content
    assert described["normalized"] == normalized
    assert described["offsets"] == "source"
    source = decode(path.read_bytes(), path, keep_bom=True)
    assert described["length"] == result["length"] == len(source)
    for chunk in result["chunks"]:
        assert chunk["text"] == source[chunk["start_index"] : chunk["end_index"]]
    assert main(["inspect", str(EXAMPLES / "regulation_service.pdf"), "--json"]) == 0
    (pdf,) = json.loads(capsys.readouterr().out)["documents"]
    assert pdf["offsets"] == "normalized" and pdf["normalized"].startswith("#")
