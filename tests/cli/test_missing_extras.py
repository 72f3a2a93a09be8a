"""An extra the runtime install leaves out (scripts/demo.sh: requirements-runtime.lock) is one
line naming the extra and how to install it, not a traceback, and the run changes nothing.
The package is made unimportable in-process (``sys.modules[name] = None``: ``import`` raises,
``find_spec`` answers None), as in a venv without it."""

from __future__ import annotations

import sys

import pytest

from ragingest.cli.main import main
from ragingest.evaluate.configs import configurations


def test_ingest_engine_ray_without_ray_names_the_extra(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)
    docs, store = tmp_path / "docs", tmp_path / "store"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nТекст.\n", encoding="utf-8")
    argv = ["ingest", str(docs), "--persist-dir", str(store), "--collection", "c"]
    assert main([*argv, "--engine", "ray", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ragingest: --engine ray needs Ray, the `ray` extra, which is not")
    assert "bash scripts/setup.sh" in err and "Traceback" not in err
    assert not store.exists() or list(store.iterdir()) == []


@pytest.mark.parametrize(
    ("strategy", "module"),
    [("semchunk", "semchunk"), ("chonkie", "chonkie"), ("llamaindex", "llama_index")],
)
def test_a_bench_baseline_asked_for_without_the_bench_extra_names_it(strategy, module, monkeypatch):
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(ValueError, match=rf"^strategy {strategy} needs the `bench` extra"):
        configurations(256, extra=[f"{strategy}:size=128"])
    # not asked for: the comparison just leaves that baseline out
    assert strategy not in {c.strategy for c in configurations(256)}
