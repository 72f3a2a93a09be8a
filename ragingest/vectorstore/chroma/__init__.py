"""Chroma behind the store port, and its libraries, imported here and nowhere else: ``backend``
(``port.Backend``) and ``index`` (``port.DenseIndex``) over ``clients`` (chromadb's embedded and
HTTP clients, imported on first use so a cold start that only reads pays nothing for them),
and ``maintenance`` (the calls ``retention`` keeps a store bounded with). Everything else
reaches Chroma through the port (``vectorstore.port``, ``vectorstore.collection``)."""

from __future__ import annotations

import os

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
