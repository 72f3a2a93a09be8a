"""A run opens its store through the registry, by the kind ``IngestOptions.backend`` names, and
does the store's upkeep through the backend (``port.upkeep_of``): a kind registered the way a
third party registers one is what the run writes."""

from __future__ import annotations

from ragingest.pipeline.options import IngestOptions
from ragingest.pipeline.runner import ingest
from ragingest.vectorstore import backends
from ragingest.vectorstore.chroma.backend import ChromaBackend, open_chroma
from ragingest.vectorstore.chroma.retention import PENDING_FILE, ChromaRetention

OPENED: list[ChromaBackend] = []


class Counted(ChromaBackend):
    """Chroma's backend, its upkeep calls counted."""

    calls: list[str]

    def upkeep(self) -> ChromaRetention | None:
        self.calls.append("upkeep")
        return super().upkeep()


def counted(persist_dir, server=None):
    backend = Counted(open_chroma(persist_dir, server).client, persist_dir)
    backend.calls = []
    OPENED.append(backend)
    return backend


def test_a_run_writes_the_store_its_options_name(tmp_path, monkeypatch):
    monkeypatch.setitem(backends.BUILT_IN, "counted", f"{__name__}:counted")
    OPENED.clear()
    docs, persist = tmp_path / "docs", tmp_path / "db"
    docs.mkdir()
    persist.mkdir()
    report = ingest([docs], IngestOptions(persist, "kb", backend="counted"))  # kb-9ffc1b20
    assert not report.error
    assert len(OPENED) == 1 and OPENED[0].calls == ["upkeep"]
    assert OPENED[0].names() == {report.collection} == {"kb-9ffc1b20"}
    assert not (persist / PENDING_FILE).exists()  # the upkeep settled: nothing owed
