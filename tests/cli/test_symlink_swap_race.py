"""The time-of-check/time-of-use race of a shared folder: while ``ingest shared`` runs, a loop
swaps ``shared/n*.md`` for symlinks to ``../out/secret.md`` and back. Whatever the walk saw,
nothing outside the root is read: ``query "root password"`` never prints the secret and no
stored chunk holds it. (``tests/loaders/test_read_after_walk.py`` makes the swap land between
the walk and the open every time; this loop is the operator's reproduction, bounded in count
and time.)"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from ragingest.cli.main import main
from ragingest.vectorstore.chroma.store import chroma_client

SECRET = "hunter2-outside-the-root"
NOTES = 64
MAX_SWAPS = 4000  # bounds of the swapping loop: whichever comes first
MAX_SECONDS = 90.0
RUNS = 3


def note(i: int) -> str:
    return f"# Заметка {i}\n\nОбычная заметка номер {i} о графике дежурств отдела.\n"


def swapper(root: Path, secret: Path, stop: threading.Event, swaps: list[int]) -> None:
    """Swap each note for a symlink to the secret and back, until ``stop`` or a bound."""
    deadline = time.monotonic() + MAX_SECONDS
    count = 0
    while not stop.is_set() and count < MAX_SWAPS and time.monotonic() < deadline:
        i = count % NOTES
        path = root / f"n{i}.md"
        link = root / f".n{i}.link"
        os.symlink(os.path.relpath(secret, root), link)
        os.replace(link, path)
        time.sleep(0.002)  # about as long a symlink as a file: the walk and the read race it
        back = root / f".n{i}.back"
        back.write_text(note(i), "utf-8")
        os.replace(back, path)
        time.sleep(0.002)
        count += 1
    swaps.append(count)


def test_symlinks_swapped_in_during_ingest_never_index_the_secret(tmp_path, capsys):
    root = tmp_path / "shared"
    root.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    secret = out / "secret.md"
    secret.write_text(f"# Доступ\n\nroot password: {SECRET}\n", "utf-8")
    for i in range(NOTES):
        (root / f"n{i}.md").write_text(note(i), "utf-8")
    db = tmp_path / "db"
    stop, swaps = threading.Event(), []
    thread = threading.Thread(target=swapper, args=(root, secret, stop, swaps))
    thread.start()
    try:  # three runs into three collections: three chances for the race
        codes = [
            main(["ingest", str(root), "--persist-dir", str(db), "--collection", f"race{n}",
                  "--no-progress", "--file-timeout", "60"])
            for n in range(RUNS)
        ]  # fmt: skip
    finally:
        stop.set()
        thread.join()
    assert set(codes) <= {0, 1}, codes  # some notes may fail by name ("replaced after the walk")
    assert swaps and swaps[0] > 0
    for n in range(RUNS):
        capsys.readouterr()
        store = ["--persist-dir", str(db), "--collection", f"race{n}"]
        assert main(["query", "root password", *store, "-k", "10"]) == 0
        printed = capsys.readouterr()
        assert SECRET not in printed.out and SECRET not in printed.err
        stored = chroma_client(db).get_collection(f"race{n}").get(include=["documents"])
        assert not any(SECRET in text for text in stored["documents"])
