"""Chroma behind the store port, and its libraries, imported here and nowhere else: ``kind`` is
what the backend registry opens (``backend``: ``port.Backend``, with its ``server`` options and
its ``files``), ``index`` (``port.DenseIndex``) over ``clients`` (chromadb's embedded and HTTP
clients, imported on first use so a cold start that only reads pays nothing for them), and
``maintenance`` (the calls ``retention`` keeps a store bounded with). Everything outside this
folder reaches Chroma through the port (``port.Backend`` and its optional capabilities,
``vectorstore.collection``)."""

from __future__ import annotations

import os

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
