"""A ``.ragingest.toml`` inside an ingested folder is data: it may set content types for that
folder, never sources, loaders or paths. Each hostile config sits beside a good file: the
good file goes in, the config's sources are ignored and said so (report and log), nothing
outside the root is stored, and no module a config names is imported before it is allowed."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ragingest.cli.loader_specs import LoaderSpecError, cli_sources, import_loader
from ragingest.cli.main import main
from ragingest.config import root_config
from ragingest.vectorstore.chroma.store import chroma_client

GOOD = "# Отпуск\n\nОтпуск оформляется заявлением за две недели до начала.\n"
MARKER_MODULE = "ragingest_marker_module"

HOSTILE = {
    "shadow": '[[sources]]\nloader = "TextLoader"\nargs = { file_path = "/etc/passwd" }\n',
    "relative": '[[sources]]\nloader = "TextLoader"\n'
    'args = { file_path = "../../../../../../../../etc/passwd" }\n',
    "etc": '[[sources]]\npath = "/etc"\n',
    "web": '[[sources]]\nloader = "WebBaseLoader"\nargs = { web_path = "http://127.0.0.1:9/" }\n',
    "import": f'[[sources]]\nloader = "{MARKER_MODULE}:Anything"\n',
}


@pytest.fixture
def marker_module(tmp_path, monkeypatch) -> Path:
    """A module whose top-level code writes a marker file: imported ⇔ the marker exists."""
    folder = tmp_path / "modules"
    folder.mkdir()
    marker = tmp_path / "imported.marker"
    (folder / f"{MARKER_MODULE}.py").write_text(
        f"open({str(marker)!r}, 'w').write('ran')\nclass Anything: pass\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, MARKER_MODULE, raising=False)
    return marker


def test_a_root_config_may_set_content_types_only(tmp_path):
    (tmp_path / ".ragingest.toml").write_text(
        '[content_types]\n"faq/*.md" = "faq"\n\n' + HOSTILE["etc"] + "[loaders]\nx = 1\n",
        encoding="utf-8",
    )
    config = root_config(tmp_path)
    assert config.content_types == (("faq/*.md", "faq"),)
    assert config.ignored == ("loaders", "sources")
    assert "ignored loaders, sources" in config.ignored_note()
    assert root_config(tmp_path / "nowhere").ignored == ()


def test_cli_sources_never_read_an_ingested_folders_config(tmp_path, marker_module):
    root = tmp_path / "u"
    root.mkdir()
    (root / ".ragingest.toml").write_text("\n".join(HOSTILE.values()), encoding="utf-8")
    assert cli_sources([str(root)], []) == [str(root)]
    assert not marker_module.exists() and MARKER_MODULE not in sys.modules


def test_a_config_file_names_only_trusted_loaders_and_imports_nothing_else(tmp_path, marker_module):
    config = tmp_path / "ops.toml"
    config.write_text(HOSTILE["import"], encoding="utf-8")
    with pytest.raises(LoaderSpecError, match="nothing was imported"):
        cli_sources([], [], config)
    assert not marker_module.exists() and MARKER_MODULE not in sys.modules
    with pytest.raises(LoaderSpecError, match="a config file may name loaders of"):
        import_loader("subprocess:Popen", trusted=False)
    # the operator typing it on the command line is a choice: imported, then checked
    with pytest.raises(LoaderSpecError, match="not a LangChain BaseLoader"):
        import_loader(f"{MARKER_MODULE}:Anything")
    assert marker_module.exists()


def test_hostile_root_configs_are_ignored_and_said_beside_a_good_file(
    tmp_path, marker_module, caplog
):
    roots = []
    for name, text in HOSTILE.items():
        root = tmp_path / "data" / name
        root.mkdir(parents=True)
        (root / f"good-{name}.md").write_text(GOOD, encoding="utf-8")
        (root / ".ragingest.toml").write_text(text, encoding="utf-8")
        roots.append(str(root))
    db, report = tmp_path / "db", tmp_path / "report.json"
    code = main(
        ["ingest", *roots, "--persist-dir", str(db), "--collection", "hostile-config",
         "--no-progress", "--report", str(report)]
    )  # fmt: skip
    assert code == 0
    data = json.loads(report.read_text(encoding="utf-8"))
    assert len(data["notes"]) == len(HOSTILE)
    assert all("ignored sources" in note for note in data["notes"])
    assert sum("ignored sources" in r.getMessage() for r in caplog.records) == len(HOSTILE)
    ok = [f["path"] for f in data["files"] if f["status"] == "ok"]
    assert len(ok) == len(HOSTILE) and all("good-" in p for p in ok)
    stored = chroma_client(db).get_collection("hostile-config").get(include=["documents"])
    assert len(stored["ids"]) == len(HOSTILE)
    assert all(text.strip() in GOOD for text in stored["documents"])
    assert not any("root:" in text for text in stored["documents"])  # no /etc/passwd line
    assert not marker_module.exists() and MARKER_MODULE not in sys.modules
