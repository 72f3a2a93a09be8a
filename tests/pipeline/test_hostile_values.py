"""Hostile values in metadata and settings: a key Chroma refuses is renamed or left out with a
note (the rest goes in, every run); content never sets an internal hint key; invalid split
settings are refused before a collection exists."""

from __future__ import annotations

import pytest
from langchain_core.documents import Document

import ragingest
from ragingest.schema import from_content, storable_key, storable_keys
from ragingest.vectorstore.chroma.store import chroma_client
from tests.helpers import ingest_cli

pytestmark = pytest.mark.slow

REFUSED = {"$where": "w", "": "e", "#document": "d", "chroma:document": "c", "\ud800bad": "s"}


def test_storable_key_renames_what_chroma_refuses():
    assert storable_key("price") == "price"
    assert storable_key("a:b") == "a:b"
    assert storable_key("$where") == "field_where"
    assert storable_key("#document") == "field_document"
    assert storable_key("chroma:document") == "field_chroma_document"
    assert storable_key("\ud800bad") == "field_bad"
    assert storable_key("") is None and storable_key("$") is None
    kept, note = storable_keys({"field_where": 1, "$where": 2, "ok": "a\udc00b"})
    assert kept == {"field_where": 1, "ok": "a\ufffdb"}  # a taken name: left out, said
    assert "'$where'" in note and "left out" in note
    assert from_content({"_page_map": 1, "_cleaning": "x", "a": 1}) == (
        {"a": 1},
        ["_page_map", "_cleaning"],
    )


def _stored(persist, collection):
    client = chroma_client(persist)
    name = next(c.name for c in client.list_collections())
    assert collection in name
    return client.get_collection(name).get(include=["metadatas"])["metadatas"]


def test_documents_with_refused_and_internal_keys_go_in_with_a_note(tmp_path):
    metadata = {"source": "a.md", "ok": "fine", **REFUSED}
    metadata |= {"_page_map": "zz", "_cleaning": "q", "_content_type": 5, "_notes": "x"}
    front = "---\n_page_map: 7\n_title_from_name: true\n---\n"
    document = Document(f"{front}# Отпуск\n\nОтпуск оформляют за две недели.", metadata=metadata)
    for _run in range(2):  # the same at every run
        report = ragingest.ingest([document], persist_dir=tmp_path / "db", collection="keys")
        assert [f.status for f in report.files] in (["ok"], ["unchanged"])
    (stored,) = _stored(tmp_path / "db", "keys")
    assert stored["ok"] == "fine" and stored["field_where"] == "w"
    assert stored["field_document"] == "d" and stored["field_chroma_document"] == "c"
    assert stored["field_bad"] == "s" and "" not in stored
    assert stored["title"] == "Отпуск" and "page_start" not in stored
    first = ragingest.ingest([document], persist_dir=tmp_path / "db2", collection="keys")
    notes = " ".join(first.files[0].notes)
    assert "'$where' → 'field_where'" in notes and "'_page_map'" in notes


def test_obsidian_front_matter_with_refused_keys_goes_in(tmp_path):
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "note.md").write_text(
        '---\n"$where": x\n"#document": y\n"chroma:document": z\n"": e\ntags: [a]\n---\n'
        "# Заметка\n\nТекст заметки про отпуск.\n",
        "utf-8",
    )
    (vault / "plain.md").write_text("# Вторая\n\nОбычная заметка.\n", "utf-8")
    args = ["--loader", "ObsidianLoader", "--loader-arg", f"path={vault}"]
    assert ingest_cli(None, tmp_path / "db", "vault", *args) == 0
    stored = _stored(tmp_path / "db", "vault")
    assert len(stored) == 2
    assert any(m.get("field_where") == "x" and m.get("field_document") == "y" for m in stored)


def test_numbers_keep_their_digits_and_where_finds_them(tmp_path, capsys):
    from ragingest.cli.main import main

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "accounts.csv").write_text(
        "название,account,big,ratio,flag\n"
        "Счёт Альфа,12345678901234567,98765432109876543210,0.12345678901234567890,true\n"
        "Счёт Бета,7,1,0.5,false\n",
        "utf-8",
    )
    assert ingest_cli(docs, tmp_path / "db", "acc") == 0
    stored = {m["title"]: m for m in _stored(tmp_path / "db", "acc")}
    alpha = stored["Счёт Альфа"]
    assert alpha["account"] == 12345678901234567 and isinstance(alpha["account"], int)
    assert alpha["big"] == "98765432109876543210"
    assert alpha["ratio"] == "0.12345678901234567890"
    assert stored["Счёт Бета"]["ratio"] == 0.5
    store = ["--persist-dir", str(tmp_path / "db"), "--collection", "acc", "--json"]
    capsys.readouterr()
    for condition in ("account=12345678901234567", "big=98765432109876543210"):
        assert main(["query", "счёт", *store, "--where", condition]) == 0
        out = capsys.readouterr().out
        assert "Альфа" in out and "Бета" not in out, condition
    big = Document("# Число\n\nОчень большое число.", metadata={"source": "n", "n": 2**80})
    nan = Document("# Не число\n\nЗначение не число.", metadata={"source": "m", "r": float("nan")})
    ragingest.ingest([big, nan], persist_dir=tmp_path / "db2", collection="api")
    values = {m["source"]: m for m in _stored(tmp_path / "db2", "api")}
    assert values["n"]["n"] == str(2**80) and values["m"]["r"] == "nan"


def test_where_values_nan_inf_and_strings(tmp_path, capsys):
    from ragingest.cli.main import main
    from ragingest.retrieval.filters import parse_where

    assert parse_where(['flag="true"']) == {"flag": {"$eq": "true"}}
    assert parse_where(["code='007'"]) == {"code": {"$eq": "007"}}
    assert parse_where(["flag=true"]) == {"flag": {"$eq": True}}
    assert parse_where(["n=98765432109876543210"]) == {"n": {"$eq": "98765432109876543210"}}
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "flags.csv").write_text("название,flag\nПервый,true\nВторой,нет\n", "utf-8")
    assert ingest_cli(docs, tmp_path / "db", "f") == 0
    store = ["--persist-dir", str(tmp_path / "db"), "--collection", "f"]
    capsys.readouterr()
    assert main(["query", "первый", *store, "--json", "--where", 'flag="true"']) == 0
    out = capsys.readouterr().out
    assert "Первый" in out and "Второй" not in out  # the column's text "true", not a bool
    for condition, message in (
        ("ratio=NaN", "NaN is no number a filter compares; to match the text 'NaN', quote it"),
        ("amount<=inf", "inf is no number a filter compares"),
        ("amount<=abc", "<= needs a number"),
    ):
        capsys.readouterr()
        assert main(["query", "первый", *store, "--where", condition]) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err and err.count("\n") == 1


def test_select_gives_k_passages_when_a_merge_joins_two_chosen_ones():
    from ragingest.retrieval.passages import Span, select

    text = "".join(chr(0x4E00 + i) for i in range(100))  # no slice repeats another

    def span(start, end, score):
        return Span("doc", start, end, text[start:end], {}, score, [f"c{start}"])

    candidates = [span(0, 10, 0.9), span(20, 30, 0.8), span(5, 25, 0.7), span(40, 50, 0.6)]
    candidates.append(span(60, 70, 0.5))
    chosen = select(candidates, 3)  # C joins A and B: the third passage is E, not missing
    assert [(s.start, s.end) for s in chosen] == [(0, 30), (40, 50), (60, 70)]
    assert chosen[0].text == text[0:30]


def test_retriever_gives_exactly_k_passages_with_parent_expansion(tmp_path):
    import random

    rng = random.Random(2)  # this corpus gave k-1 for "document 7 section 2" (k=5..15)
    words = "leave approval manager days form request policy travel expense limit report office"
    words = words.split()
    docs = tmp_path / "docs"
    docs.mkdir()
    for d in range(100):
        parts = [f"# Document {d}\n"]
        for s in range(1, rng.randint(2, 6)):
            parts.append(f"## Section {s}\n")
            for p in range(rng.randint(1, 8)):
                body = " ".join(rng.choice(words) for _ in range(rng.randint(10, 60)))
                parts.append(f"Document {d} section {s} paragraph {p}. {body}.\n")
                if rng.random() < 0.3:
                    parts.append(f"### Part {p}\n")
        (docs / f"doc{d}.md").write_text("\n".join(parts), "utf-8")
    ragingest.ingest([docs], persist_dir=tmp_path / "db", collection="kk")
    chunks = ragingest.retriever(tmp_path / "db", "kk")
    for query in ("document 7 section 2", "document 42 section 1", "travel expense report"):
        for k in (4, 5, 6, 8):
            assert len(chunks.invoke(query, k=k)) == k, (query, k)
