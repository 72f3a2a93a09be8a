"""``ragingest trace`` on the memo: the «три дня» rule with its condition, through a chunking
that cuts it (fixed 120/0 characters) and through the default heading-first chunking."""

from __future__ import annotations

import json
import shutil

import pytest

from ragingest.cli.main import main
from ragingest.evaluate.trace import load_sources, locate, source_check, trace
from tests.conftest import memo_path
from tests.helpers import ingest_cli

QUESTION = "На сколько дней выдают альбом с красной наклейкой?"
# the condition and its rule: [66, 189) of the memo, cut at 120 by fixed 120/0 windows
RULE = (
    "Альбомы с красной наклейкой тоже относятся к общему фонду. "
    "Для альбомов с красной наклейкой срок выдачи составляет три дня."
)


@pytest.fixture(scope="module")
def collections(tmp_path_factory):
    """A persist dir with the memo ingested by default (``memo``) and cut by fixed 120/0
    character windows (``fixed``, written through the same store)."""
    from ragingest.splitters.fixed import FixedSizeSplitter
    from ragingest.vectorstore.ids import stored_id
    from ragingest.vectorstore.opening import open_store

    root = tmp_path_factory.mktemp("trace")
    source = root / "src"
    source.mkdir()
    shutil.copy(memo_path(), source / "library_memo.md")
    persist = root / "db"
    assert ingest_cli(source, persist, "memo") == 0
    text = (source / "library_memo.md").read_text(encoding="utf-8")
    documents = FixedSizeSplitter(120, 0, unit="chars").create_documents(
        [text], [{"source": "library_memo.md"}]
    )
    store = open_store(persist, "fixed", create=True)
    store.add_documents(documents, ids=[stored_id(d) for d in documents])
    return source, persist


def test_locate_ignores_case_and_whitespace_runs():
    assert locate("три  ДНЯ.", "срок\nсоставляет три\n дня.") == (16, 25)
    assert locate("четыре дня", "три дня") is None


def test_the_source_checkpoint_gives_offsets_into_the_file_itself(tmp_path):
    source = "\ufeff---\r\ntitle: Памятка\r\n---\r\n## Выдача\r\nСрок выдачи три дня.\r\n"
    (tmp_path / "memo.md").write_bytes(source.encode("utf-8"))
    point = source_check("срок выдачи три дня.", [], load_sources([tmp_path]))
    start = source.index("Срок")
    assert point.data == {"source": "memo.md", "start": start, "end": start + 20}


@pytest.mark.slow
def test_default_chunking_keeps_the_rule_through_every_checkpoint(collections):
    source, persist = collections
    report = trace(
        QUESTION, [RULE], persist_dir=persist, collection="memo", k=3, sources=[source],
        answer="Альбомы с красной наклейкой тоже относятся к общему фонду. Для альбомов с "
        "красной наклейкой срок выдачи составляет три дня.",
    )
    (expectation,) = report.expectations
    assert [c.ok for c in expectation.checkpoints] == [True, True, True, True, True]
    assert expectation.checkpoints[0].data == {"source": "library_memo.md", "start": 66,
                                               "end": 189}
    assert expectation.checkpoints[1].data["heading"] == "Выдача книг"
    assert "embedded with its heading «Выдача книг»" in expectation.checkpoints[1].detail
    assert expectation.checkpoints[2].data["ranks"][0] == 1  # by default the memo is one chunk
    assert report.ok


@pytest.mark.slow
def test_fixed_windows_cut_the_rule_and_trace_names_the_chunks(collections):
    _source, persist = collections
    report = trace(QUESTION, [RULE], persist_dir=persist, collection="fixed", k=3)
    (expectation,) = report.expectations
    assert expectation.failed == "chunks"
    chunks = expectation.checkpoints[1]
    assert chunks.detail == (
        "cut across 2 chunks: library_memo.md #0 [0, 120) | library_memo.md #1 [120, 240)"
    )
    assert expectation.checkpoints[3].ok is False  # neither passage holds it whole
    assert expectation.checkpoints[4].ok is None  # no answer given


@pytest.mark.slow
def test_cli_exit_codes_and_json(collections, capsys):
    _source, persist = collections
    base = [QUESTION, "--expect", RULE, "--persist-dir", str(persist), "-k", "3", "--json"]
    assert main(["trace", *base, "--collection", "memo"]) == 0
    assert json.loads(capsys.readouterr().out)["ok"] is True
    assert main(["trace", *base, "--collection", "fixed", "--answer", "Три дня."]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["expectations"][0]["failed"] == "chunks"
    assert out["expectations"][0]["advice"].startswith("the chunking cuts the text")


@pytest.mark.slow
def test_an_answer_that_drops_the_condition_fails_at_the_answer(collections):
    _source, persist = collections
    report = trace(
        QUESTION, ["три дня"], persist_dir=persist, collection="memo", k=3,
        answer="Книги выдают на четырнадцать дней.",
    )
    assert report.expectations[0].failed == "answer"


def test_the_heading_trace_names_is_the_one_the_breadcrumb_names():
    from langchain_core.documents import Document

    from ragingest.evaluate.trace import _chunk_check, _holders

    text = (
        "# Списки\n\n## Фильтрация {#filtering}\n\nПример вывода:\n\n"
        "```bash\n# Массивы\nls arrays/\n```\n\n"
        "Для фильтрации списка создайте вычисляемое свойство с отфильтрованным массивом.\n"
    )
    cut = text.index("Для")
    meta = {"doc_id": "d", "source": "list.md", "section_path": "Списки > Фильтрация"}
    chunks = [
        Document(id=f"c{i}", page_content=text[s:e].strip(),
                 metadata={**meta, "start_index": s, "chunk_index": i})
        for i, (s, e) in enumerate([(0, cut), (cut, len(text))])
    ]  # fmt: skip
    expected = "Для фильтрации списка создайте вычисляемое свойство с отфильтрованным массивом."
    check = _chunk_check(_holders(expected, chunks))
    assert check.ok
    # the `# Массивы` line is a comment in a code sample, not a heading
    assert "embedded with its heading «Фильтрация»" in check.detail, check.detail
