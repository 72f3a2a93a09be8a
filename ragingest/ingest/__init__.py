"""``ragingest.ingest``: the command line (``cli``) and the one-call Python API.

The package itself is callable, so a LangChain app writes::

    import ragingest
    faq = [Document(page_content="...", metadata={"source": "faq-1"})]
    report = ragingest.ingest(
        ["docs/", PyPDFLoader("report.pdf"), faq],
        persist_dir="chroma_db", collection="kb", chunk_size=200,
    )

(``ragingest.api.ingest``: any source in, keyword options, a ``RunReport`` out). Importing it
imports nothing heavy: the run is imported on the first call.
"""

from __future__ import annotations

import sys
import types
from typing import Any


class _CallableModule(types.ModuleType):
    def __call__(self, sources: Any, **kwargs: Any) -> Any:
        from ragingest.api import ingest

        return ingest(sources, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
