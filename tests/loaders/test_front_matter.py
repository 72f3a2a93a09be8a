"""Front matter becomes metadata by one rule on every path: a folder's file, a LangChain loader
into ingest, a Document into ``split_documents`` (``loaders.markdown.front_matter``)."""

from __future__ import annotations

from pathlib import Path

from langchain_core.documents import Document

from ragingest.loaders import loader_for
from ragingest.loaders.markdown.front_matter import read_front_matter, storable
from ragingest.loaders.markdown.pages import normalize_documents
from ragingest.pipeline.split import Splitting, records_of
from ragingest.schema import storable_problems
from ragingest.splitters import HeadingFirstSplitter
from ragingest.splitters.factory import SplitSettings

PAGE = (
    "---\ntitle: Установка\noutline: deep\npageClass: wide-page\ntags: [агент, установка]\n"
    "sidebar_position: 2\ndraft: false\ndate: 2024-05-01\nsource: elsewhere.md\n"
    "section_path: Чужой > Путь\nauthors:\n  - name: Иван\n---\n\n"
    "# Установка агента\n\n## Требования\n\nНужен Python 3.12 и 2 ГБ памяти.\n"
)
WANT = {
    "outline": "deep",
    "pageClass": "wide-page",
    "tags": ["агент", "установка"],
    "sidebar_position": 2,
    "draft": False,
    "fm_source": "elsewhere.md",
    "fm_section_path": "Чужой > Путь",
    "authors": '[{"name":"Иван"}]',
    "doc_date": "2024-05-01",
}


def _paths(tmp_path: Path) -> dict[str, dict]:
    from langchain_community.document_loaders import TextLoader as LangChainTextLoader

    path = tmp_path / "install.md"
    path.write_text(PAGE, encoding="utf-8")
    splitter = HeadingFirstSplitter(1000, 0, 0, unit="chars")
    splitting = Splitting(SplitSettings(), lambda: splitter)

    def first(documents: list[Document]) -> dict:
        document = normalize_documents(documents)[0]
        return records_of(document, "install.md", splitting, None)[0].metadata

    given = Document(page_content=PAGE, metadata={"source": "install.md"})
    return {
        "folder": first(list(loader_for(path, tmp_path).lazy_load())),
        "loader": first(LangChainTextLoader(str(path), encoding="utf-8").load()),
        "split_documents": splitter.split_documents([given])[0].metadata,
    }


def test_front_matter_is_the_same_metadata_on_every_path(tmp_path):
    for path, metadata in _paths(tmp_path).items():
        assert {k: metadata.get(k) for k in WANT} == WANT, path
        # ours are never overwritten: the colliding keys are kept under the prefix
        assert metadata["source"].endswith("install.md"), path
        assert metadata["section_path"] == "Установка агента > Требования", path
        assert "pageclass" not in metadata and "title" not in {k.lower() for k in WANT}
        assert not storable_problems(metadata), path


def test_the_run_report_says_which_keys_were_prefixed(tmp_path):
    from tests.splitting import split_file

    path = tmp_path / "install.md"
    path.write_text(PAGE, encoding="utf-8")
    chunks = split_file(path, tmp_path, HeadingFirstSplitter(1000, 0, 0, unit="chars"))
    assert any("'source' as 'fm_source'" in note and "'section_path' as 'fm_section_path'"
               in note for note in chunks.notes), chunks.notes  # fmt: skip
    assert not chunks.lost


def test_values_keep_their_yaml_types_as_far_as_chroma_stores_them():
    fields, body = read_front_matter("---\nn: 2\nx: 1.5\nok: yes\nempty:\nl: [1, two]\n---\nA")
    assert body == "A"
    assert [storable(fields[k]) for k in ("n", "x", "ok", "empty", "l")] == [
        2, 1.5, True, None, ["1", "two"]
    ]


def test_broken_yaml_keeps_its_lines_as_strings():
    fields, body = read_front_matter("---\ntitle: A: b: [\nkey: value\n---\ntext")
    assert body == "text"
    assert fields["key"] == "value"


def test_alias_bomb_is_bounded():
    bomb = "---\na: &a [x, x, x, x, x, x, x, x, x]\n"
    for name in "bcdefghij":
        prev = chr(ord(name) - 1)
        bomb += f"{name}: &{name} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"
    fields, _body = read_front_matter(bomb + "---\ntext")
    assert len(storable(fields["j"])) <= 2048


def test_every_path_stores_the_file_an_app_opens_to_cite(tmp_path):
    (tmp_path / "guide").mkdir()
    for path, metadata in _paths(tmp_path).items():
        if path == "split_documents":  # a Document of text: no file behind it
            assert "file_path" not in metadata
            continue
        opened = Path(metadata["file_path"]).read_text(encoding="utf-8")
        assert opened == PAGE, path
        assert Path(metadata["file_path"]).is_absolute(), path


def test_the_file_path_is_not_part_of_the_chunk_id():
    from ragingest.schema import ChunkRecord

    a = ChunkRecord("a.md", "text", {"source": "a.md", "file_path": "/x/a.md"}, "text", "text")
    b = ChunkRecord("a.md", "text", {"source": "a.md", "file_path": "/y/a.md"}, "text", "text")
    assert a.id == b.id
