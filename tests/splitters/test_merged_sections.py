"""A chunk merged from several small sections names all of them: metadata and breadcrumb."""

from __future__ import annotations

from ragingest.schema import validate
from ragingest.splitters import HeadingFirstSplitter
from ragingest.splitters.chunk_metadata import chunk_metadata

DOC = (
    "# Guide\n\n"
    "## Setup\n\nInstall the package.\n\n"
    "### Linux\n\nUse apt.\n\n"
    "## Usage\n\nRun the command.\n"
)


DOCUMENT = {"source": "guide.md", "title": "Guide", "file_type": "md"}
DOCUMENT |= {"doc_date": "2026-01-01", "language": "en"}


def split(text: str = DOC):
    splitter = HeadingFirstSplitter(400, 0, 300, unit="chars", max_embed_tokens=None)
    return splitter.split_chunks(text)


def test_merged_chunk_lists_every_section_and_keeps_the_common_path() -> None:
    chunks = split()
    assert len(chunks) == 1
    chunk = chunks[0]
    assert chunk.text == DOC.rstrip()
    assert chunk.headings == ((1, "Guide"),)
    assert chunk.sections == (
        ((1, "Guide"), (2, "Setup"), (3, "Linux")),
        ((1, "Guide"), (2, "Usage")),
    )
    assert chunk.section_paths == ["Guide > Setup > Linux", "Guide > Usage"]
    assert chunk.embed_text == "Guide > Setup > Linux; Usage\n" + chunk.text


def test_merged_chunk_metadata_carries_the_list_and_validates() -> None:
    chunk = split()[0]
    metadata = chunk_metadata(DOCUMENT, chunk, 0, 1)
    assert metadata["section_path"] == "Guide"
    assert metadata["section_paths"] == ["Guide > Setup > Linux", "Guide > Usage"]
    assert metadata["h1"] == "Guide" and "h2" not in metadata
    assert validate(metadata) == []


def test_single_section_chunk_has_no_list() -> None:
    text = "# Guide\n\n## Setup\n\nInstall the package.\n"
    (chunk,) = split(text)
    assert chunk.sections == ()
    assert chunk.section_paths == ["Guide > Setup"]
    metadata = chunk_metadata(DOCUMENT, chunk, 0, 1)
    assert "section_paths" not in metadata
    assert (metadata["section_path"], metadata["h2"]) == ("Guide > Setup", "Setup")
    assert chunk.embed_text == "Guide > Setup\n" + chunk.text
