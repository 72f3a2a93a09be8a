"""The lazy packages (``ragingest``, ``ragingest.retrieval``, ``ragingest.vectorstore``) list
their exports in ``dir()`` without importing them, and each listed name resolves."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

LAZY = {
    "ragingest": ("ingest", "retriever", "ALL", "Principals"),
    "ragingest.retrieval": ("HeadingFirstRetriever", "ALL", "Principals"),
    "ragingest.vectorstore": ("open_store",),
}


@pytest.mark.parametrize("package", sorted(LAZY))
def test_dir_lists_the_lazy_exports_without_importing_them(package):
    code = (
        "import importlib, json, sys; "
        f"p = importlib.import_module({package!r}); names = dir(p); "
        "heavy = ('ragingest.retrieval.heading_first', 'ragingest.vectorstore.chroma.store', "
        "'ragingest.pipeline.api'); "
        "print(json.dumps([names, [m for m in heavy if m in sys.modules], "
        "[n for n in p.__all__ if getattr(p, n, None) is None]]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    names, imported, unresolved = json.loads(out.stdout.splitlines()[-1])
    assert set(LAZY[package]) <= set(names)
    assert names == sorted(names) and "__getattr__" in names
    assert imported == []
    assert unresolved == []
