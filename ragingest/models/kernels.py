"""Which kernel the ONNX model is built with on this CPU: int8 (dynamic, per channel) or fp32.

The ONNX file is built locally once (``prepare``, or the first ingest), so the build picks,
from the CPU's flags, the fastest kernel whose recall holds on that class of CPU, as
``bench/encoder.py`` measured it; the choice is part of the model fingerprint
(``locate.model_fingerprint``: ``-onnx-int8``, ``-onnx-fp32``), so a collection never mixes
vectors of two kernels. ONNX Runtime's own kernels (MLAS: AVX2, AVX-512, VNNI, AMX) are
picked at run time by CPUID; what the build decides is the arithmetic.

Measured (bench/README.md, "Encoder per CPU class"): int8 is the fastest everywhere it was
run (fp16 runs at fp32's speed on ONNX Runtime's CPU provider, even with AVX512-FP16; it has
no bf16 ``MatMul``), so every class maps to it; ``$RAGINGEST_ONNX_KERNEL`` (``int8`` |
``fp32``) overrides, e.g. where int8's recall does not hold (an AVX2 CPU without VNNI
multiplies int8 with ``vpmaddubsw``, which can saturate).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

KERNELS = ("int8", "fp32")
KERNEL_ENV = "RAGINGEST_ONNX_KERNEL"
# the fastest kernel that keeps recall (within 0.5 points of torch's), per CPU class
FASTEST = {
    "amx": "int8",  # Sapphire Rapids: int8 2.4x fp32 texts/s, the float model's recall
    "avx512-vnni": "int8",
    "avx-vnni": "int8",
    "avx512": "int8",
    "avx2": "int8",  # EPYC, issue numbers: int8 2.2x torch fp32
    "other": "int8",
}
_CLASSES = (  # the first flag present names the class
    ("amx_int8", "amx"),
    ("avx512_vnni", "avx512-vnni"),
    ("avx_vnni", "avx-vnni"),
    ("avx512bw", "avx512"),
    ("avx2", "avx2"),
)


@functools.cache  # read once a process: every model fingerprint asks, and the CPU stays
def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset[str]:
    """The first CPU's flags (Linux ``/proc/cpuinfo``; ARM's ``Features``), else none."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return frozenset(value.split())
    return frozenset()


def cpu_class(flags: frozenset[str] | None = None) -> str:
    """The class of CPU the flags describe, as the kernel table names it."""
    flags = cpu_flags() if flags is None else flags
    return next((name for flag, name in _CLASSES if flag in flags), "other")


def choose_kernel(flags: frozenset[str] | None = None) -> str:
    """The kernel to build the model with: ``$RAGINGEST_ONNX_KERNEL``, else the table's
    fastest for this CPU's class. ``ValueError`` for an unknown override."""
    override = os.environ.get(KERNEL_ENV, "").strip().lower()
    if override:
        if override not in KERNELS:
            raise ValueError(f"{KERNEL_ENV} must be one of {KERNELS}, got {override!r}")
        return override
    return FASTEST[cpu_class(flags)]


def kernel_note(flags: frozenset[str] | None = None) -> str:
    """One line for the build's output: the kernel chosen and why."""
    flags = cpu_flags() if flags is None else flags
    kernel, name = choose_kernel(flags), cpu_class(flags)
    how = f"${KERNEL_ENV}" if os.environ.get(KERNEL_ENV, "").strip() else f"CPU class {name}"
    return f"onnx kernel: {kernel} ({how})"


def build_kernel(fused: Path, target: Path, kernel: str, folder: Path | None = None) -> None:
    """Write the fused fp32 model ``fused`` as ``kernel`` to ``target``: int8 weights per
    channel, activations quantized per run, the linear layers smoothed first with ``folder``'s
    tokenizer (``int8_smoothing``; ``None``: not smoothed, as revision 1 built it; 1 − cos to
    the float model 0.0008-0.0012, unsmoothed 0.0035), or fp32 as is."""
    if kernel == "fp32":
        os.replace(fused, target)
        return
    from onnxruntime.quantization import QuantType, quantize_dynamic

    if folder is not None:
        from ragingest.models.int8_smoothing import smooth_linear_inputs

        smooth_linear_inputs(fused, folder)
    quantize_dynamic(
        str(fused),
        str(target),
        weight_type=QuantType.QInt8,
        per_channel=True,
        extra_options={"DefaultTensorType": 1},  # FLOAT, for the fused ops' outputs
    )
