"""Chroma's own libraries, imported here and nowhere else: ``clients`` (chromadb's embedded and
HTTP clients, imported on first use so a cold start that only reads pays nothing for them) and
``langchain`` (``langchain_chroma.Chroma``, the base of ``store.ChunkStore``) and
``maintenance`` (the calls ``retention`` keeps a store bounded with). ``kind`` is what the
backend registry opens (``backend``, with its ``server`` options and its ``files``); everything
outside this folder reaches Chroma through it (``port.Backend`` and its optional capabilities)
or through the store seam (``vectorstore.seam``)."""

from __future__ import annotations

import os

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
