"""The command line in a hostile environment, the smaller cases: an output file's missing
folder is refused before the work (none is made), a store inside the ingested folder is skipped
(not its own input), ``persist_dir=None`` is one clear error, ``| head`` ends quietly, a PDF
whose text layer is garbage is named with a note, a token a server refuses is said so."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import ragingest
from ragingest.cli.main import main
from ragingest.loaders.scans.text_quality import real_word_share
from ragingest.pipeline.split import GARBLED_NOTE
from tests import docbuilders as b
from tests.helpers import ingest_cli

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
RUSSIAN = (
    "Заявление на отпуск подают руководителю за две недели до его начала. Руководитель "
    "согласует его в течение трёх рабочих дней, копия уходит в отдел кадров. "
)


def _docs(tmp_path: Path, count: int = 2) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(count):
        (docs / f"d{i}.md").write_text(f"# Раздел {i}\n\n{RUSSIAN}Номер {i}.\n", "utf-8")
    return docs


def test_an_output_file_in_a_missing_folder_is_refused_before_the_work(tmp_path, capsys):
    docs = _docs(tmp_path)
    db = tmp_path / "db"
    for flag in ("--report", "--run-log"):
        target = tmp_path / "no" / "such" / "out.json"
        capsys.readouterr()
        assert ingest_cli(docs, db, "kb", flag, target) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"the folder {target.parent} does not exist" in err
        assert not (tmp_path / "no").exists() and not db.exists()  # no work, no folder
    assert ingest_cli(docs, db, "kb", "--report", db / "r.json", "--run-log", db / "l") == 0
    assert (db / "r.json").is_file() and (db / "l").is_file()  # the persist dir: the run's
    (tmp_path / "out").mkdir()
    report = tmp_path / "out" / "report.json"
    assert ingest_cli(docs, db, "kb", "--report", report, "--run-log", tmp_path / "out" / "r") == 0
    assert len(json.loads(report.read_text("utf-8"))["files"]) == 2


def test_a_store_inside_the_ingested_folder_is_skipped_and_said(tmp_path):
    docs = _docs(tmp_path)
    db = docs / "store"
    for _run in range(3):
        report = ragingest.ingest([docs], persist_dir=db, collection="kb")
        store = [f for f in report.files if f.path.startswith("store")]
        assert [(f.path, f.status, f.kind) for f in store] == [("store", "skipped", "store")]
        assert sorted(f.path for f in report.files if f.status in ("ok", "unchanged")) == [
            "d0.md",
            "d1.md",
        ]
        assert report.added + report.skipped == 2  # the run log never became a source


def test_persist_dir_none_is_one_clear_error(tmp_path):
    with pytest.raises(TypeError, match="persist_dir must be the store's folder"):
        ragingest.ingest([_docs(tmp_path)], persist_dir=None, collection="kb")


def test_output_cut_by_head_ends_quietly(tmp_path):
    docs = _docs(tmp_path, count=12)
    assert ingest_cli(docs, tmp_path / "db", "kb") == 0
    code = (
        "import sys; from ragingest.cli.main import main; sys.exit(main(sys.argv[1:]))"
    )
    argv = [sys.executable, "-c", code, "query", "отпуск", "--persist-dir", str(tmp_path / "db")]
    argv += ["--collection", "kb", "-k", "12"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line (`| head -1`, at once)
    try:
        done = subprocess.run(argv, stdout=write_end, stderr=subprocess.PIPE, env=env, timeout=300)
    finally:
        os.close(write_end)
    assert done.stderr.decode() == "" and done.returncode == 141


def _garbled_pdf(path: Path) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_font("Roboto", "", b._roboto())
    pdf.set_font("Roboto", size=11)
    pdf.add_page()
    garbage = (RUSSIAN * 4).encode("cp1251").decode("latin-1")  # a wrong code page
    pdf.multi_cell(0, 6, garbage)
    pdf.output(str(path))


def test_a_pdf_with_a_garbage_text_layer_is_named_with_a_note(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    _garbled_pdf(docs / "scan.pdf")
    b.build_pdf(docs / "good.pdf")
    report = ragingest.ingest([docs], persist_dir=tmp_path / "db", collection="kb")
    notes = {f.path: f.notes for f in report.files}
    assert any(n.startswith(GARBLED_NOTE) for n in notes["scan.pdf"]), notes
    assert not any(n.startswith(GARBLED_NOTE) for n in notes["good.pdf"])
    assert real_word_share(RUSSIAN) == 1.0
    assert real_word_share("(cid:12)(cid:34) (cid:5)") == 0.0


class _Refusing(http.server.BaseHTTPRequestHandler):
    def _deny(self) -> None:
        body = b'{"error":"Unauthorized"}'
        self.send_response(401)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _deny

    def log_message(self, *args) -> None:
        pass


def test_a_refused_token_is_said_so(tmp_path, capsys):
    server = http.server.HTTPServer(("127.0.0.1", 0), _Refusing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        port = str(server.server_address[1])
        capsys.readouterr()
        argv = ["query", "x", "--chroma-host", "127.0.0.1", "--chroma-port", port]
        assert main([*argv, "--chroma-token", "wrong", "--collection", "kb"]) == 8
        err = capsys.readouterr().err
        assert "refused the token (HTTP 401" in err and "can't be reached" not in err
    finally:
        server.shutdown()
        server.server_close()
