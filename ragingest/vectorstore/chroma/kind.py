"""Chroma as the registry knows it (``backends.BUILT_IN["chroma"]``): the factory of its
``port.Backend`` and what it offers before a backend is opened — the ``--chroma-*`` server
options and its files in ``--persist-dir``. Light to import (``ragingest --help`` reads the
options): chromadb and the backend are imported on the first call."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragingest.vectorstore.chroma.files import ChromaFiles
from ragingest.vectorstore.chroma.server import ChromaServerOptions

if TYPE_CHECKING:
    from ragingest.vectorstore.port import Backend


class ChromaKind:
    """A ``backends.Factory`` with Chroma's ``server_options`` and ``store_files``."""

    server_options = ChromaServerOptions()
    store_files = ChromaFiles()

    def __call__(self, persist_dir: str | Path | None, server: Any = None) -> Backend:
        from ragingest.vectorstore.chroma.backend import open_chroma

        return open_chroma(persist_dir, server)


CHROMA = ChromaKind()
