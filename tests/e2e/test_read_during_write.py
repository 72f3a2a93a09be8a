"""Readers during a write: a query loop beside an ingest that rewrites every file, round after
round, sees each file's chunks (and parents) of one version only, never a mix, with the lexical
index in step. Every paragraph of a file carries the file's revision marker, so each returned
passage says which version it came from. Chroma is a ``chroma run`` server; the records (and
with them the read gate) in PostgreSQL or in the SQLite file beside the writer."""

from __future__ import annotations

import re
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.chroma import LOOPBACK, chroma_server
from tests.conftest import ROOT
from tests.postgres import postgres_server, server_bin

pytestmark = pytest.mark.slow

FILES = ("alpha", "beta", "gamma")
SECTIONS = 24  # 8 chunks a file: its write spans batches of --write-batch 4
ROUNDS = 3  # revisions written after the first: the loop must see three of the four
MAX_QUERIES = 3000
MAX_SECONDS = 600
MARK = re.compile(r"Ревизия r(\d+)\.")
QUESTION = "правило ревизия выдачи книг"
WRITER = """
import sys
from pathlib import Path
from ragingest.cli.main import main
corpus, args, rounds = Path(sys.argv[1]), sys.argv[3:], int(sys.argv[2])
for revision in range(2, rounds + 2):
    for path in sorted(corpus.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace(f"r{revision - 1}.", f"r{revision}."), encoding="utf-8")
    assert main(["ingest", str(corpus), *args]) == 0
    print(revision, flush=True)
"""


def write_corpus(folder: Path, revision: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        sections = [
            f"## Раздел {k}\n\nРевизия r{revision}. Правило {k} файла {name}: книги выдают на "
            f"{k + 2} дней, читальный зал открыт с {8 + k % 4}:00, ревизия фонда раз в год. "
            f"Ревизия r{revision}."
            for k in range(SECTIONS)
        ]
        text = f"# Правила {name}\n\n" + "\n\n".join(sections) + "\n"
        (folder / f"{name}.md").write_text(text, encoding="utf-8")


def versions(docs) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for doc in docs:
        marks = set(MARK.findall(doc.page_content))
        assert marks, doc.page_content  # every passage names its revision
        found.setdefault(str(doc.metadata["source"]), set()).update(marks)
    return found


@pytest.fixture(scope="module")
def chroma(tmp_path_factory):
    with chroma_server(tmp_path_factory.mktemp("chroma")) as server:
        yield server


@pytest.mark.parametrize("records", ["postgresql", "sqlite"])
def test_queries_beside_a_rewriting_ingest_see_whole_files(chroma, records, tmp_path):
    import ragingest
    from ragingest.cli.main import main

    with _records_url(records) as url:
        corpus, persist = tmp_path / "corpus", tmp_path / "state"
        collection = f"rw_{records}"
        write_corpus(corpus, 1)
        args = ["--persist-dir", str(persist), "--collection", collection, "--no-progress"]
        args += ["--chroma-host", LOOPBACK, "--chroma-port", str(chroma.port)]
        args += ["--write-batch", "4"]  # a file is written in several batches, then its old out
        if url:
            args += ["--records-url", url]
        assert main(["ingest", str(corpus), *args]) == 0
        options = {"collection": collection, "chroma_host": LOOPBACK, "chroma_port": chroma.port}
        options |= {"persist_dir": persist, "records_url": url, "k": 12}
        chunks = ragingest.retriever(**options, parents=False, dedup=False)
        passages = ragingest.retriever(**options)  # parent sections, de-duplicated
        first = versions(chunks.invoke(QUESTION))
        assert first and set(first) <= {f"{n}.md" for n in FILES}
        assert all(marks == {"1"} for marks in first.values())

        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(corpus), str(ROUNDS), *args],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        mixed: list[dict[str, set[str]]] = []
        seen: set[str] = set()
        queries = 0
        deadline = time.monotonic() + MAX_SECONDS
        try:
            while writer.poll() is None and queries < MAX_QUERIES and time.monotonic() < deadline:
                for retriever in (chunks, passages):
                    found = versions(retriever.invoke(QUESTION))
                    queries += 1
                    seen |= {v for marks in found.values() for v in marks}
                    if any(len(marks) > 1 for marks in found.values()):
                        mixed.append(found)
        finally:
            out, err = writer.communicate(timeout=MAX_SECONDS)
        assert writer.returncode == 0, err[-3000:]
        rounds = [line for line in out.splitlines() if line.isdigit()]
        assert rounds == [str(n) for n in range(2, ROUNDS + 2)]
        print(f"{queries} queries, revisions seen {sorted(seen)}, {len(mixed)} mixed")
        assert mixed == []
        assert len(seen) >= 3 and queries >= 20  # the loop ran across several rewrites
        for retriever in (chunks, passages):  # which files rank in depends on the CPU's floats
            final = versions(retriever.invoke(QUESTION))
            assert final and all(marks == {str(ROUNDS + 1)} for marks in final.values())
        assert chunks.store.lexical.count() == chunks.store.count()


class _records_url:
    """A fresh PostgreSQL database's URL (``postgresql``) or None (the SQLite default)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.server = None

    def __enter__(self) -> str | None:
        if self.kind == "sqlite":
            return None
        if server_bin() is None:
            pytest.skip("PostgreSQL server binaries not installed (scripts/setup.sh)")
        self.server = postgres_server()
        pg = self.server.__enter__()
        return pg.create_database(f"t_{uuid.uuid4().hex[:12]}")

    def __exit__(self, *exc: object) -> None:
        if self.server is not None:
            self.server.__exit__(*exc)
