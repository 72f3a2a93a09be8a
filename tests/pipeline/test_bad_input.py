"""The bad-input corpus, built here, ingested with the real model and Chroma beside good files
of every format: no crash, each bad file named in the run report with its reason, every good
file ingested, exit code 1; then numeric catalogue metadata answers ``--where price<=5000``."""

from __future__ import annotations

import io
import json
import os
import random
import zipfile
from pathlib import Path

import pytest

from ragingest.cli.main import main
from ragingest.errors import ParseError
from ragingest.vectorstore.chroma.store import chroma_client
from tests import docbuilders as b
from tests.helpers import ingest_cli

pytestmark = pytest.mark.slow

RUSSIAN = "Съешь же ещё этих мягких французских булок, да выпей чаю. Ёлка стоит в углу."
ROOT_USER = os.geteuid() == 0


def _bomb(path: Path, unpacked: int = 64 * 2**20) -> None:
    """A DOCX-shaped zip whose document.xml inflates to ``unpacked`` bytes."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        with archive.open("word/document.xml", "w", force_zip64=True) as member:
            block = b" " * 2**20
            for _ in range(unpacked // len(block)):
                member.write(block)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("bad_input")
    good = root / "good"
    good.mkdir()
    b.build_pdf(good / "regulation.pdf")
    b.build_docx(good / "policy.docx")
    b.build_pptx(good / "deck.pptx")
    b.build_html(good / "help.html")
    b.build_pandoc(good / "memo.odt", "odt")
    b.build_pandoc(good / "memo.epub", "epub")
    b.build_pandoc(good / "memo.rtf", "rtf")
    b.build_eml_thread(good / "mail")
    b.build_mbox(good / "thread.mbox")
    b.build_catalogue_xlsx(good / "furniture.xlsx")
    b.build_catalogue_csv(good / "apartments.csv")
    b.build_faq_csv(good / "faq.csv")
    b.build_tickets_json(good / "tickets.json")
    (good / "cp1251.txt").write_bytes(RUSSIAN.encode("cp1251"))
    (good / "koi8.txt").write_bytes(RUSSIAN.encode("koi8_r"))
    (good / "utf16.txt").write_bytes(RUSSIAN.encode("utf-16"))
    (good / "script.html").write_text(
        "<html><head><script>var secret = 'скрипт';</script></head><body>"
        "<script>alert('ещё скрипт')</script><p>Видимый текст страницы.</p></body></html>",
        encoding="utf-8",
    )
    headings = "".join(f"## {i}\n\n" for i in range(10_000))  # few tokens: cheap to embed
    (good / "many_headings.md").write_text(f"# Много заголовков\n\n{headings}", "utf-8")
    (good / "file with spaces.md").write_text("# Пробелы\n\nИмя с пробелами.\n", "utf-8")
    (good / "документ.md").write_text("# Кириллица\n\nИмя по-русски.\n", "utf-8")
    (good / "new\nline.md").write_text("# Перевод строки\n\nИмя с переводом строки.\n", "utf-8")
    (good / os.fsdecode(b"name\xff.md")).write_text("# Байты\n\nИмя не в UTF-8.\n", "utf-8")
    deep = "<p>TOP</p>" + "<div>" * 260 + "<p>DEEP</p>" + "</div>" * 260 + "<p>END</p>"
    (good / "deep.html").write_text(f"<html><body>{deep}</body></html>", "utf-8")
    (good / "lying.eml").write_bytes(
        b"From: a@example.org\nTo: b@example.org\nSubject: charset\n"
        b"Content-Type: text/plain; charset=utf-8\n\n" + (RUSSIAN * 3).encode("cp1251") + b"\n"
    )

    bad = root / "bad"
    bad.mkdir()
    (bad / "empty.txt").write_bytes(b"")
    (bad / "random.pdf").write_bytes(random.Random(3).randbytes(4096))
    pdf = b.build_pdf(tmp_path_factory.mktemp("whole") / "whole.pdf").read_bytes()
    (bad / "truncated.pdf").write_bytes(pdf[: len(pdf) // 2])
    b.build_pdf(bad / "encrypted.pdf", user_password="secret", owner_password="secret")
    _bomb(bad / "bomb.docx")
    with (bad / "huge_line.txt").open("wb") as handle:
        for _ in range(50):
            handle.write(b"x" * 2**20)
    os.symlink("loop_b.md", bad / "loop_a.md")
    os.symlink("loop_a.md", bad / "loop_b.md")
    os.symlink("missing.md", bad / "dangling.md")
    (bad / "locked.md").write_text("# Закрыт\n\nНельзя прочитать.\n", "utf-8")
    os.chmod(bad / "locked.md", 0)
    (bad / "malformed.eml").write_bytes(b"\x00\x01garbage without headers\n\x02\x03" * 20)
    os.mkfifo(bad / "fifo.txt")  # an open() would block the run forever
    os.symlink("/dev/zero", bad / "zero.txt")  # a read would never end
    outside = tmp_path_factory.mktemp("outside") / "secret.md"
    outside.write_text("# Секрет\n\nСекретная строка вне корня.\n", "utf-8")
    os.symlink(outside, bad / "outside.md")
    (bad / "partial.jsonl").write_text(
        '{"name": "Стол", "цена": 14990}\n{"name": \n{"name": "Шкаф", "цена": 12000}\n', "utf-8"
    )
    return root


@pytest.fixture(scope="module")
def run(corpus, tmp_path_factory) -> tuple[int, dict, Path]:
    persist = tmp_path_factory.mktemp("chroma_bad")
    report = persist / "report.json"
    # the smaller model: this run is about files, not ranking
    minilm = ("--model", "sentence-transformers/all-MiniLM-L6-v2")
    code = ingest_cli(corpus, persist, "bad", "--report", report, *minilm)
    yield code, json.loads(report.read_text(encoding="utf-8")), persist
    os.chmod(corpus / "bad" / "locked.md", 0o644)


GOOD = sorted(
    [
        "good/regulation.pdf",
        "good/policy.docx",
        "good/deck.pptx",
        "good/help.html",
        "good/memo.odt",
        "good/memo.epub",
        "good/memo.rtf",
        "good/mail/thread_1.eml",
        "good/mail/thread_2.eml",
        "good/mail/thread_3.eml",
        "good/thread.mbox",
        "good/furniture.xlsx",
        "good/apartments.csv",
        "good/faq.csv",
        "good/tickets.json",
        "good/cp1251.txt",
        "good/koi8.txt",
        "good/utf16.txt",
        "good/script.html",
        "good/many_headings.md",
        "good/file with spaces.md",
        "good/документ.md",
        "good/new\nline.md",
        "good/name\\xff.md",
        "good/deep.html",
        "good/lying.eml",
    ]
)
BAD = {
    "bad/empty.txt": ("empty", "no text found"),
    "bad/random.pdf": ("parse_failed", "not a PDF"),
    "bad/truncated.pdf": ("parse_failed", "truncated"),
    "bad/encrypted.pdf": ("parse_failed", "encrypted with a password"),
    "bad/bomb.docx": ("too_large", "zip bomb"),
    "bad/huge_line.txt": ("too_large", "over the 32 MiB limit"),
    "bad/malformed.eml": ("parse_failed", "not an e-mail message"),
}
if not ROOT_USER:  # root reads a chmod 000 file anyway
    BAD["bad/locked.md"] = ("unreadable", "Permission denied")
SKIPPED = {  # never opened: decided from lstat/stat in the walk
    "bad/loop_a.md": ("symlink_loop", "Too many levels of symbolic links"),
    "bad/loop_b.md": ("symlink_loop", "Too many levels of symbolic links"),
    "bad/dangling.md": ("dangling_symlink", "No such file or directory"),
    "bad/fifo.txt": ("not_regular", "a FIFO (named pipe), not a regular file"),
    "bad/zero.txt": ("not_regular", "a symlink to /dev/zero, a character device"),
    "bad/outside.md": ("outside_root", "outside the ingested folders"),
}


def test_every_bad_file_is_named_and_every_good_file_goes_in(run):
    code, report, _persist = run
    assert code == 1
    status = {f["path"]: f for f in report["files"]}
    assert sorted(p for p, f in status.items() if f["status"] == "ok") == sorted(
        GOOD + (["bad/locked.md"] if ROOT_USER else [])
    )
    failed = {p: (f["kind"], f["error"]) for p, f in status.items() if f["status"] == "failed"}
    assert sorted(failed) == sorted(BAD)
    for path, (kind, reason) in BAD.items():
        assert failed[path][0] == kind, (path, failed[path])
        assert reason in failed[path][1], (path, failed[path])
    assert report["failed"] == len(BAD)
    skipped = {p: (f["kind"], f["error"]) for p, f in status.items() if f["status"] == "skipped"}
    assert sorted(skipped) == sorted(SKIPPED)
    for path, (kind, reason) in SKIPPED.items():
        assert skipped[path][0] == kind and reason in skipped[path][1], (path, skipped[path])
    partial = status["bad/partial.jsonl"]
    assert (partial["status"], partial["chunks"]) == ("partial", 2)
    assert partial["notes"] == ["1 JSON lines skipped: line 2: Expecting value (column 10)"]
    assert status["good/deep.html"]["notes"][0].startswith("HTML nested 262 levels deep")
    assert status["good/lying.eml"]["notes"][0].startswith(
        "the text/plain part: bytes not valid utf-8 as declared"
    )


def test_report_counts_cleaning(run):
    _code, report, _persist = run
    by_path = {f["path"]: f for f in report["files"]}
    assert by_path["good/regulation.pdf"]["cleaning"] == {
        "header_footer_lines": 3,
        "page_numbers": 3,
        "toc_lines": 5,
    }
    assert by_path["good/policy.docx"]["cleaning"] == {"header_footer_lines": 2}
    totals: dict[str, int] = {}
    for result in report["files"]:
        for key, value in result["cleaning"].items():
            totals[key] = totals.get(key, 0) + value
    assert report["cleaning"] == totals
    assert (totals["quoted_lines"], totals["signature_lines"]) == (14, 14)


def stored(persist: Path) -> dict[str, list[tuple[str, dict]]]:
    data = chroma_client(persist).get_collection("bad").get(include=["documents", "metadatas"])
    out: dict[str, list[tuple[str, dict]]] = {}
    for text, meta in zip(data["documents"], data["metadatas"], strict=True):
        out.setdefault(meta["source"], []).append((text, meta))
    return out


def test_encodings_scripts_and_many_headings_come_through(run):
    _code, _report, persist = run
    chunks = stored(persist)
    for name in ("cp1251.txt", "koi8.txt", "utf16.txt"):
        assert [text for text, _ in chunks[f"good/{name}"]] == [RUSSIAN]
    assert [text for text, _ in chunks["good/script.html"]] == ["Видимый текст страницы."]
    many = chunks["good/many_headings.md"]
    assert 10 < len(many) < 10_000  # tiny sections merged, but all of them stored
    assert sum(text.count("## ") for text, _ in many) == 10_000
    assert [text for text, _ in chunks["good/new\nline.md"]] == [
        "# Перевод строки\n\nИмя с переводом строки."
    ]


def test_hostile_files_keep_their_text_and_nothing_from_outside_is_stored(run):
    _code, _report, persist = run
    chunks = stored(persist)
    assert [text for text, _ in chunks["good/deep.html"]] == ["TOP\n\nDEEP\n\nEND"]
    assert [text for text, _ in chunks["good/name\\xff.md"]] == ["# Байты\n\nИмя не в UTF-8."]
    assert [text for text, _ in chunks["good/lying.eml"]] == [f"# charset\n\n{RUSSIAN * 3}"]
    assert sorted(meta["title"] for _, meta in chunks["bad/partial.jsonl"]) == ["Стол", "Шкаф"]
    texts = [text for source in chunks for text, _ in chunks[source]]
    assert not any("Секретная строка" in text for text in texts)
    assert not set(chunks) & {"bad/outside.md", "bad/zero.txt", "bad/fifo.txt"}


def test_numeric_catalogue_metadata_filters(run, capsys):
    _code, _report, persist = run
    capsys.readouterr()
    args = ["query", "мебель для гостиной", "--persist-dir", str(persist), "--collection", "bad"]
    assert main([*args, "--where", "price<=5000", "-k", "10", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert [h["metadata"]["title"] for h in hits] == ["Стол «Тромсё»"]
    assert hits[0]["metadata"]["price"] == 4990
    assert main([*args, "--where", "area>=50", "-k", "10", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert sorted(h["metadata"]["row"] for h in hits) == [2, 3]


def test_bomb_is_refused_without_inflating(corpus, monkeypatch):
    from ragingest.errors import FileTooLargeError
    from ragingest.loaders import loader_for

    def no_member_reads(*args, **kwargs):
        raise AssertionError("a member of the archive was opened")

    monkeypatch.setattr(zipfile.ZipFile, "open", no_member_reads)  # read() goes through open()
    with pytest.raises(FileTooLargeError, match="unpacks to 64 MiB"):
        list(loader_for(corpus / "bad" / "bomb.docx").lazy_load())


def test_zip_check_reads_only_the_directory():
    """The check reads the central directory only: a member whose bytes are damaged (its
    CRC no longer matches, so reading it fails) still passes; sizes come from the directory."""
    from ragingest.loaders.formats.rich import check_archive

    data = io.BytesIO()
    with zipfile.ZipFile(data, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("a.txt", "member bytes")
    damaged = data.getvalue().replace(b"member bytes", b"MEMBER BYTES", 1)
    assert zipfile.ZipFile(io.BytesIO(damaged)).testzip() == "a.txt"  # reading it would fail
    check_archive("ok.docx", damaged, "DOCX")  # passes: nothing but the directory was read
    with pytest.raises(ParseError, match="not a valid DOCX file"):
        check_archive("bad.docx", damaged[: len(damaged) // 2], "DOCX")  # no directory
