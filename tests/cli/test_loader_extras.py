"""``--loader``'s packages: langchain-community is an optional extra (a bare ``CLASS`` without
it says how to install it), and a maintained integration package works as ``MODULE:CLASS``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ragingest.cli.loader_specs import LoaderSpec, LoaderSpecError, import_loader

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_without_community_a_bare_class_says_how_to_install(monkeypatch):
    for name in [m for m in sys.modules if m.split(".")[0] == "langchain_community"]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "langchain_community", None)  # as if not installed
    with pytest.raises(LoaderSpecError, match=r"pip install 'ragingest\[community\]'"):
        import_loader("TextLoader")


def test_a_missing_integration_package_is_named_with_its_install_line():
    with pytest.raises(LoaderSpecError, match="pip install langchain-nosuchthing"):
        import_loader("langchain_nosuchthing:Loader")


@pytest.mark.slow
def test_langchain_unstructured_loads_as_module_class():
    pytest.importorskip("langchain_unstructured")
    loader = LoaderSpec(
        "langchain_unstructured:UnstructuredLoader",
        {"file_path": str(EXAMPLES / "help_account.html")},
    ).build()
    docs = loader.load()
    assert docs and any("Личный кабинет" in d.page_content for d in docs)
