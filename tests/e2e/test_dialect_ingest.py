"""A documentation site as a new user ingests it (real model, real Chroma): a LangChain loader
into ``ragingest.ingest`` keeps exact offsets under front matter and stores the front matter's
lists as lists; an ``.mdx`` folder goes in through the command line; a folder none of whose
files could be read exits 1."""

from __future__ import annotations

from pathlib import Path

import pytest

import ragingest
from ragingest.vectorstore.chroma.store import chroma_client
from tests.helpers import ingest_cli

pytestmark = pytest.mark.slow

PAGE = (
    "---\r\noutline: deep\r\npageClass: wide\r\ntags: [агент, установка]\r\nsidebar_position: 2"
    "\r\n---\r\n\r\n# Установка агента {#install}\r\n\r\n::: tip Совет\r\nСначала обновите "
    "систему.\r\n:::\r\n\r\n## Требования {#requirements}\r\n\r\nНужен Python 3.12 и 2 ГБ "
    "памяти.\r\n"
)


def _stored(persist: Path, collection: str) -> list[tuple[str, dict]]:
    got = chroma_client(persist).get_collection(collection).get(include=["documents", "metadatas"])
    return list(zip(got["documents"], got["metadatas"], strict=True))


def test_a_langchain_loader_keeps_offsets_and_front_matter_types(tmp_path):
    from langchain_community.document_loaders import TextLoader

    path = tmp_path / "install.md"
    path.write_bytes(PAGE.encode("utf-8"))
    loader = TextLoader(str(path), encoding="utf-8")
    loaded = loader.load()[0].page_content
    ragingest.ingest([loader], persist_dir=tmp_path / "db", collection="site")
    report = ragingest.ingest([str(path)], persist_dir=tmp_path / "db2", collection="site")
    assert report.exit_code == 0
    for persist, text in ((tmp_path / "db", loaded), (tmp_path / "db2", PAGE)):
        stored = _stored(persist, "site")
        assert stored
        for chunk, meta in stored:
            assert text[meta["start_index"] : meta["end_index"]] == chunk, persist
            assert meta["tags"] == ["агент", "установка"] and meta["sidebar_position"] == 2
            assert meta["pageClass"] == "wide" and meta["outline"] == "deep"
            assert "{#" not in meta["section_path"], meta
        assert Path(stored[0][1]["file_path"]).read_bytes() == PAGE.encode("utf-8")


def test_mdx_goes_in_and_a_folder_of_unreadable_files_exits_1(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "install.mdx").write_text(
        "import Tabs from '@theme/Tabs';\n\n# Установка\n\nНужен Python 3.12.\n", "utf-8"
    )
    assert ingest_cli(site, tmp_path / "db", "mdx", "--include", "*.mdx") == 0
    (chunk, meta), *_ = _stored(tmp_path / "db", "mdx")
    assert meta["file_type"] == "mdx" and "Нужен Python" in chunk
    other = tmp_path / "other"
    other.mkdir()
    (other / "install.xyz").write_text("что это?", "utf-8")
    assert ingest_cli(other, tmp_path / "db", "xyz") == 1
