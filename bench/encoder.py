"""The encoder per CPU class: ONNX int8 and fp32 against torch, texts/s and recall.

``python -m bench.encoder [--quick] [--repeat 3] [--rows a,b] [--out FILE]``

Every row embeds the same heading-first chunks of the eval corpora (``--quick``: the two
smallest) with the document prompt; the rows are timed in turn on three interleaved thirds
of the chunks, ``--repeat`` rounds (texts/s = chunks ÷ median seconds per third × 3, so a
load spike hits one third of one row, not a whole row), and the process's CPU time per text
(all threads: what a row costs where the cores are busy anyway, as on a shared machine).
Recall: every question of ``questions_df.csv`` for those corpora takes its top 5 chunks by
exact cosine, queries embedded by the same row (``bench.backend.scores``: recall and
recall@5). Each row carries the CPU's model name, its class (``models.kernels.cpu_class``),
the flags that pick MLAS's and oneDNN's kernels, and the load average around it.

Rows:
- ``onnx int8, N streams``: the default: each text alone, N runs at once on one thread each
  (``OnnxSentenceEncoder(streams=N)``), N = 1 and the process's cores;
- ``onnx int8 before the rewrite``: the same int8 graph without ``models.onnx_rewrite`` (fused
  ``SkipLayerNormalization``, masked ``Attention``), built under ``$RAGINGEST_CACHE_DIR/bench/``;
- ``onnx int8, 1 run x 2 intra-op threads``: the default before (one run at a time, its ops
  on two threads);
- ``onnx fp32, N streams``: the same fused graph, not quantized (``RAGINGEST_ONNX_KERNEL``);
- ``torch fp32``: sentence-transformers, batches of 64 bucketed by length;
- ``torch bf16``: the same under CPU autocast, where the CPU has AVX512_BF16 or AMX-BF16.

ONNX Runtime picks its kernels by CPUID at run time and has no documented switch to cap the
ISA (only a source build without AVX-512), so an AVX2-only class is measured only on such a
machine; torch can be capped (``ATEN_CPU_CAPABILITY=avx2``, ``ONEDNN_MAX_CPU_ISA=AVX2``),
which ``--torch-isa avx2`` sets for the torch rows (in this process: set before import).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

KERNEL_FLAGS = ("avx2", "fma", "avx512f", "avx512bw", "avx512_vnni", "avx_vnni",
                "avx512_bf16", "avx512_fp16", "amx_bf16", "amx_int8")  # fmt: skip


def cpu_row() -> dict[str, Any]:
    """The CPU's name, class and kernel-relevant flags."""
    from ragingest.models.kernels import cpu_class, cpu_flags

    flags = cpu_flags()
    name = ""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            name = line.split(":", 1)[1].strip()
            break
    return {
        "cpu": name,
        "cores": len(os.sched_getaffinity(0)),
        "class": cpu_class(flags),
        "flags": [f for f in KERNEL_FLAGS if f in flags],
    }


def _onnx(kernel: str, streams: int, intra_op: int = 1) -> Any:
    """An ``OnnxSentenceEncoder`` of the default model built as ``kernel``."""
    import onnxruntime as ort

    from ragingest.models import kernels
    from ragingest.models.locate import cache_dir, model_fingerprint
    from ragingest.models.onnx_backend import OnnxSentenceEncoder
    from ragingest.models.onnx_export import export_int8
    from ragingest.models.resolve import load_model_info

    info = load_model_info(None, "onnx")
    before = os.environ.get(kernels.KERNEL_ENV)
    os.environ[kernels.KERNEL_ENV] = kernel  # the export child reads it too
    try:
        folder = Path(info.path)
        target = cache_dir() / "onnx" / model_fingerprint(info.name, folder, "onnx")
        onnx_file = export_int8(folder, target)
    finally:
        if before is None:
            del os.environ[kernels.KERNEL_ENV]
        else:
            os.environ[kernels.KERNEL_ENV] = before
    encoder = OnnxSentenceEncoder(info.path, onnx_file, info.max_seq_length, info, streams)
    if intra_op > 1:  # the default before: one run at a time on intra-op threads
        options = ort.SessionOptions()
        options.intra_op_num_threads = intra_op
        options.enable_cpu_mem_arena = False
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        encoder.session = ort.InferenceSession(str(onnx_file), options)
    return encoder


def _onnx_before_rewrite(streams: int) -> Any:
    """The default model's int8 graph as revision 1 built it (fused ``SkipLayerNormalization``,
    masked ``Attention``: no ``onnx_rewrite``), kept under ``$RAGINGEST_CACHE_DIR/bench/``."""
    from ragingest.models.kernels import build_kernel
    from ragingest.models.locate import cache_dir
    from ragingest.models.onnx_backend import OnnxSentenceEncoder
    from ragingest.models.onnx_graph import build_bert_graph
    from ragingest.models.resolve import load_model_info

    info = load_model_info(None, "onnx")
    target = cache_dir() / "bench" / "onnx-r1" / "model_int8.onnx"
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        fused = build_bert_graph(Path(info.path), target.with_name("fused.onnx"))
        build_kernel(fused, target, "int8")
        fused.unlink()
    return OnnxSentenceEncoder(info.path, target, info.max_seq_length, info, streams)


def _torch(bf16: bool) -> Callable[..., np.ndarray]:
    import torch

    from ragingest.models.resolve import load_sentence_transformer

    model = load_sentence_transformer(None, "torch")

    def encode(texts: list[str], prompt: str, **kwargs: Any) -> np.ndarray:
        kwargs.setdefault("batch_size", 64)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            rows = model.encode(texts, prompt=prompt, normalize_embeddings=True, **kwargs)
        return np.asarray(rows, dtype=np.float32)

    return encode


def rows_to_measure(cores: int, flags: list[str]) -> dict[str, Callable[[], Any]]:
    """Row name → a factory of its encoder (``encode(texts, prompt=...)``)."""
    rows: dict[str, Callable[[], Any]] = {
        f"onnx int8, {cores} streams": lambda: _onnx("int8", cores).encode,
        f"onnx int8 before the rewrite, {cores} streams": (
            lambda: _onnx_before_rewrite(cores).encode
        ),
        "onnx int8, 1 run x 2 intra-op threads (before)": lambda: _onnx("int8", 1, 2).encode,
        "onnx int8, 1 stream": lambda: _onnx("int8", 1).encode,
        f"onnx fp32, {cores} streams": lambda: _onnx("fp32", cores).encode,
        "torch fp32 (batches of 64 by length)": lambda: _torch(False),
    }
    if "avx512_bf16" in flags or "amx_bf16" in flags:
        rows["torch bf16 autocast"] = lambda: _torch(True)
    return rows


def run(
    quick: bool, repeat: int, say: Any = print, only: str | None = None
) -> dict[str, Any]:
    from bench.backend import QUICK_CORPORA, K, _questions, scores, split_corpus
    from bench.common import corpus_texts
    from ragingest.models.resolve import load_model_info
    from ragingest.splitters import HeadingFirstSplitter

    cpu = cpu_row()
    info = load_model_info(None, "onnx")
    docs = corpus_texts(QUICK_CORPORA if quick else None)
    splitter = HeadingFirstSplitter(
        tokenizer=info.splitter_tokenizer, max_embed_tokens=info.max_embed_tokens
    )
    chunks, texts = split_corpus(docs, splitter)
    questions = _questions({stem for stem, _ in docs})
    say(f"encoder: {cpu['cpu']} ({cpu['class']}: {' '.join(cpu['flags'])}), {cpu['cores']} cores")
    say(f"  {len(texts)} chunks, {len(questions)} questions, load {os.getloadavg()[0]:.2f}")
    makers = rows_to_measure(cpu["cores"], cpu["flags"])
    wanted = [w.strip() for w in only.split(",")] if only else None
    encoders = {
        name: make()
        for i, (name, make) in enumerate(makers.items())
        if wanted is None or i == 0 or any(w in name for w in wanted)
    }
    passage, query = info.document_prompt, info.query_prompt
    for encode in encoders.values():
        encode(texts[:4], prompt=passage)  # warm up
    thirds = [list(range(k, len(texts), 3)) for k in range(3)]
    seconds: dict[str, list[list[float]]] = {name: [[], [], []] for name in encoders}
    cpu_seconds: dict[str, float] = dict.fromkeys(encoders, 0.0)  # all threads' CPU time
    vectors: dict[str, np.ndarray] = {}
    loads = []

    for r in range(repeat):
        for k, part in enumerate(thirds):
            for name, encode in encoders.items():
                started, cpu_started = time.perf_counter(), time.process_time()
                rows = encode([texts[i] for i in part], prompt=passage)
                seconds[name][k].append(time.perf_counter() - started)
                cpu_seconds[name] += time.process_time() - cpu_started
                if r == 0:
                    vectors.setdefault(name, np.zeros((len(texts), rows.shape[1]), np.float32))
                    vectors[name][part] = rows
            loads.append(os.getloadavg()[0])
        say(f"  round {r + 1}/{repeat}, load {loads[-1]:.2f}")
    result: dict[str, Any] = {**cpu, "chunks": len(texts), "questions": len(questions)}
    result["load_average"] = [round(min(loads), 2), round(max(loads), 2)]
    out = []
    for name, encode in encoders.items():
        per_third = [float(np.median(s)) for s in seconds[name]]
        q = encode([q[0] for q in questions], prompt=query)
        top = np.argsort(-(q @ vectors[name].T), axis=1)[:, :K]
        out.append(
            {
                "row": name,
                "texts_per_s": round(len(texts) / sum(per_third), 1),
                # CPU time per text: what a row costs when every core is busy anyway
                "cpu_ms_per_text": round(1000 * cpu_seconds[name] / (repeat * len(texts)), 1),
                "seconds": [[round(x, 2) for x in s] for s in seconds[name]],
                **scores(questions, chunks, top),
            }
        )
    base = out[0]["texts_per_s"]
    for row in out:
        row["speed_vs_default"] = round(row["texts_per_s"] / base, 2)
        say(
            f"  {row['row']:48s} {row['texts_per_s']:6.1f} texts/s ({row['speed_vs_default']}x)"
            f" {row['cpu_ms_per_text']:6.1f} CPU ms/text"
            f"  recall {row['recall']} recall@5 {row['recall_at_5']}"
        )
    result["rows"] = out
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.encoder", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="the two smallest corpora")
    parser.add_argument("--repeat", type=int, default=3, help="rounds over the thirds")
    parser.add_argument("--torch-isa", choices=["avx2"], help="cap torch's kernels (not ORT's)")
    parser.add_argument("--out", type=Path, help="write the result as JSON here")
    parser.add_argument(
        "--rows", help="comma-separated parts of row names to run (the default row always runs)"
    )
    args = parser.parse_args(argv)
    if args.torch_isa and "torch" in sys.modules:
        raise SystemExit("--torch-isa must be set before torch is imported")
    if args.torch_isa:
        os.environ["ATEN_CPU_CAPABILITY"] = args.torch_isa
        os.environ["ONEDNN_MAX_CPU_ISA"] = args.torch_isa.upper()
    result = run(args.quick, args.repeat, only=args.rows)
    if args.out:
        args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
