"""``query --max-context-tokens N`` prints the context an app's retriever hands the generator
(the same passages as ``HeadingFirstRetriever(max_context_tokens=N)``), within the budget."""

from __future__ import annotations

import json

import pytest

from ragingest.cli.main import main
from ragingest.retrieval.heading_first import HeadingFirstRetriever

pytestmark = pytest.mark.slow  # the real model, Chroma on disk

PAGE = (
    "# Библиотека\n\n## Выдача книг\n\nКниги из общего фонда выдают на четырнадцать дней. "
    "Продлить срок можно один раз.\n\n## Читальный зал\n\nГазеты читают только в зале, журналы "
    "выдают на дом на три дня.\n\n## Штрафы\n\nЗа каждый день просрочки начисляют десять рублей.\n"
)


def test_query_prints_the_budgeted_context_an_app_gets(tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "rules.md").write_text(PAGE, encoding="utf-8")
    store = ["--persist-dir", str(tmp_path / "db"), "--collection", "kb"]
    assert main(["ingest", str(docs), *store, "--no-progress", "--chunk-size", "40"]) == 0
    capsys.readouterr()
    question = "на сколько дней выдают журналы"
    assert main(["query", question, *store, "-k", "3", "--max-context-tokens", "40", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["max_context_tokens"] == 40 and 0 < report["tokens"] <= 40, report
    texts = [p["text"] for p in report["passages"]]
    assert 1 <= len(texts) <= 3 and report["chars"] == sum(map(len, texts))
    app = HeadingFirstRetriever(
        persist_dir=tmp_path / "db", collection="kb", k=3, max_context_tokens=40
    ).invoke(question)
    assert texts == [d.page_content for d in app]
    assert all(t in PAGE for t in texts)
    assert main(["query", question, *store, "-k", "3", "--max-context-tokens", "40"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"context: {len(texts)} passages, {report['tokens']} of 40 tokens, ")
    assert texts[0].split("\n")[0] in out


def test_query_refuses_a_budget_under_one_token(capsys):
    argv = ["query", "вопрос", "--persist-dir", "nowhere", "--collection", "kb"]
    assert main([*argv, "--max-context-tokens", "0"]) == 2
    assert "--max-context-tokens must be at least 1, not 0" in capsys.readouterr().err
