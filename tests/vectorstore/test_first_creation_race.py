"""Two first runs into one new directory at once: the records database's tables and Chroma's
are created under a lock file (``records_location.creation_lock``), so neither run fails with
"table ... already exists". Processes start together, several rounds (the race, unlocked,
failed about one round in two)."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from filelock import FileLock

from ragingest.vectorstore.records.database import ensure_schema, records_engine

ROOT = Path(__file__).resolve().parents[2]
CREATE = """
import sys
from ragingest.vectorstore.chroma.collection_info import chroma_client
from ragingest.vectorstore.records.database import ensure_schema, records_engine
ensure_schema(records_engine(sys.argv[1]))
chroma_client(sys.argv[1]).get_or_create_collection(sys.argv[2])
"""


def test_first_creations_at_once_all_succeed(tmp_path):
    env = {"PYTHONPATH": str(ROOT), "ANONYMIZED_TELEMETRY": "False"}
    for round_ in range(3):
        db = tmp_path / f"db{round_}"
        runs = [
            subprocess.Popen(
                [sys.executable, "-c", CREATE, str(db), name], env=env, stderr=subprocess.PIPE
            )
            for name in ("alpha", "beta")
        ]
        errors = [run.communicate(timeout=120)[1].decode() for run in runs]
        assert [run.returncode for run in runs] == [0, 0], errors


def test_schema_creation_waits_for_the_lock(tmp_path):
    engine = records_engine(tmp_path)
    database = Path(str(engine.url.database))
    done = threading.Event()
    with FileLock(str(database) + ".lock"):
        worker = threading.Thread(target=lambda: (ensure_schema(engine), done.set()))
        worker.start()
        assert not done.wait(1.0)  # held here: the creation waits
    worker.join(30)
    assert done.is_set()
