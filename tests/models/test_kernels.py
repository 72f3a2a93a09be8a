"""The ONNX kernel chosen per CPU class at build time, and recorded in the fingerprint."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragingest.models import kernels, locate

EPYC = "fpu sse4_2 avx f16c fma avx2 sha_ni"  # issue 51's machine: AVX2, no AVX-512/VNNI
SAPPHIRE = "avx2 avx512f avx512bw avx512_vnni avx_vnni amx_bf16 amx_tile amx_int8"


def _cpuinfo(tmp_path: Path, flags: str) -> Path:
    path = tmp_path / "cpuinfo"
    path.write_text(f"processor\t: 0\nmodel name\t: X\nflags\t\t: {flags}\n\nprocessor\t: 1\n")
    return path


@pytest.mark.parametrize(
    ("flags", "name"),
    [
        (EPYC, "avx2"),
        (SAPPHIRE, "amx"),
        ("avx2 avx512f avx512bw avx512_vnni", "avx512-vnni"),
        ("avx2 avx_vnni", "avx-vnni"),
        ("avx2 avx512f avx512bw", "avx512"),
        ("sse4_2", "other"),
    ],
)
def test_cpu_class_from_the_flags(tmp_path, flags, name):
    assert kernels.cpu_class(kernels.cpu_flags(_cpuinfo(tmp_path, flags))) == name


def test_no_cpuinfo_is_no_flags(tmp_path):
    assert kernels.cpu_flags(tmp_path / "missing") == frozenset()
    assert kernels.cpu_class(frozenset()) == "other"


def test_the_table_picks_int8_on_every_measured_class_and_the_variable_overrides(monkeypatch):
    monkeypatch.delenv(kernels.KERNEL_ENV, raising=False)
    for flags in (EPYC, SAPPHIRE, ""):
        assert kernels.choose_kernel(frozenset(flags.split())) == "int8"
    assert kernels.kernel_note(frozenset(EPYC.split())) == "onnx kernel: int8 (CPU class avx2)"
    monkeypatch.setenv(kernels.KERNEL_ENV, " FP32 ")
    assert kernels.choose_kernel(frozenset(SAPPHIRE.split())) == "fp32"
    assert kernels.kernel_note() == f"onnx kernel: fp32 (${kernels.KERNEL_ENV})"
    monkeypatch.setenv(kernels.KERNEL_ENV, "bf16")
    with pytest.raises(ValueError, match="RAGINGEST_ONNX_KERNEL must be one of"):
        kernels.choose_kernel()


def test_the_kernel_is_part_of_the_fingerprint(tmp_path, monkeypatch):
    (tmp_path / "config.json").write_text("{}")
    monkeypatch.delenv(kernels.KERNEL_ENV, raising=False)
    torch_print = locate.model_fingerprint("m", tmp_path, "torch")
    assert locate.model_fingerprint("m", tmp_path, "onnx") == torch_print + "-onnx-int8"
    monkeypatch.setenv(kernels.KERNEL_ENV, "fp32")
    assert locate.model_fingerprint("m", tmp_path, "onnx") == torch_print + "-onnx-fp32"
    assert locate.model_fingerprint("m", tmp_path, "torch") == torch_print
