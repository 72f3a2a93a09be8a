"""ONNX Runtime (int8) backend for the embedding models, offline: the default backend
(``RAGINGEST_BACKEND=torch`` runs sentence-transformers on torch instead).

sentence-transformers' own ``backend="onnx"`` goes through ``optimum-onnx``, whose only release
needs ``transformers<4.58`` (ours is 5.x), so this module does the same directly: build the
model's fused transformer graph once (``float_graph``: from the weights for a BERT encoder,
without torch; else exported by torch and fused by ONNX Runtime's BERT optimizer),
quantize its weights to int8 (per channel, dynamic), keep it under
``$RAGINGEST_CACHE_DIR/onnx/<fingerprint>/``, and encode with ONNX Runtime plus the model's own
pooling and normalization, read from its sentence-transformers configuration.

Contract: ``OnnxSentenceEncoder.encode`` takes the arguments ragingest passes to
``SentenceTransformer.encode`` and returns float32 rows in input order (normalized when asked
or when the model ends with a ``Normalize`` module); texts over ``max_seq_length`` tokens are
truncated as sentence-transformers does; a text's vector depends on that text alone (one text
per run, see ``encode``). Building needs the ``onnx`` package (a dependency).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from filelock import FileLock

from ragingest.defaults import EMBED_BATCH_SIZE
from ragingest.models.kernels import build_kernel, choose_kernel

if TYPE_CHECKING:
    from tokenizers import Tokenizer

log = logging.getLogger(__name__)

MODEL_FILE = "model_int8.onnx"  # fused (BERT-like), int8 per channel
MAPPED_FILE = "model_int8.mapped.onnx"  # the same, its weights in MAPPED_FILE + ".data"


def _modules(folder: Path) -> list[dict[str, Any]]:
    path = folder / "modules.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []


def pooling_config(folder: Path) -> tuple[str, bool]:
    """(pooling mode, whether a ``Normalize`` module follows) from the model's modules."""
    mode, normalize = "mean", False
    for module in _modules(folder):
        kind = module.get("type", "")
        if kind.endswith("Pooling"):
            config = json.loads((folder / module["path"] / "config.json").read_text("utf-8"))
            modes = [k for k, v in config.items() if k.startswith("pooling_mode_") and v is True]
            if len(modes) != 1 or modes[0] not in (
                "pooling_mode_mean_tokens",
                "pooling_mode_cls_token",
                "pooling_mode_max_tokens",
            ):
                raise NotImplementedError(f"pooling {modes} is not supported by the onnx backend")
            if config.get("include_prompt") is False:
                raise NotImplementedError("pooling without the prompt is not supported by onnx")
            mode = modes[0].removeprefix("pooling_mode_").split("_")[0]
        elif kind.endswith("Normalize"):
            normalize = True
    return mode, normalize


def export_int8(folder: str | Path, target: Path) -> Path:
    """Export ``folder``'s transformer to ONNX and quantize it to int8 (once; atomic), in a
    child process: the export holds the fp32 model and its graph (~1.5 GB), which an ingest
    process should not keep as its peak memory."""
    final = target / MODEL_FILE
    if final.is_file():
        return mapped_copy(final)
    target.mkdir(parents=True, exist_ok=True)
    # processes starting at once (parallel test workers, two first ingests) wait for one
    # export instead of each spending a minute of CPU on the same file
    with FileLock(target / ".export.lock"):
        if not final.is_file():
            _export_in_child(folder, target)
        return mapped_copy(final)


def _export_in_child(folder: str | Path, target: Path) -> None:
    log.warning("exporting %s to ONNX int8 (once, about a minute)", Path(folder).name)
    command = [sys.executable, "-m", "ragingest.models.onnx_backend", str(folder), str(target)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0 or not (target / MODEL_FILE).is_file():
        detail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise RuntimeError(f"exporting the model to ONNX failed: {detail[0]}")


def mapped_copy(model_file: Path) -> Path:
    """``model_file`` saved once more beside it (``MAPPED_FILE``), its weights in a separate
    file that ONNX Runtime memory-maps instead of parsing and copying them out of the graph: a
    session of the 118 MB e5 model opens in ~0.1 s instead of ~0.4 s, the same graph and
    weights. Written once (atomic: the weights, then the graph); ``model_file`` itself when
    that fails."""
    mapped = model_file.with_name(MAPPED_FILE)
    if mapped.is_file():
        return mapped
    weights = MAPPED_FILE + ".data"
    try:
        import onnx

        model = onnx.load(str(model_file))
        with tempfile.TemporaryDirectory(dir=model_file.parent) as tmp:
            onnx.save_model(
                model,
                str(Path(tmp) / MAPPED_FILE),
                save_as_external_data=True,
                all_tensors_to_one_file=True,
                location=weights,
                size_threshold=1024,
            )
            for name in (weights, MAPPED_FILE):
                (Path(tmp) / name).chmod(0o644)  # as readable as the single file
            os.replace(Path(tmp) / weights, mapped.with_name(weights))
            os.replace(Path(tmp) / MAPPED_FILE, mapped)
    except Exception as exc:  # a read-only cache, a full disk: the single file still works
        log.warning("kept the single-file ONNX model (%s)", exc)
        return model_file
    return mapped


def _export(folder: str | Path, target: Path) -> Path:
    final = target / MODEL_FILE

    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target) as tmp, _quiet():
        fused = float_graph(Path(folder), Path(tmp))
        quantized = Path(tmp) / MODEL_FILE
        build_kernel(fused, quantized, choose_kernel())  # int8 unless this CPU says fp32
        os.replace(quantized, final)  # another process exporting too: the same file wins
    return final


def float_graph(folder: Path, tmp: Path) -> Path:
    """``folder``'s transformer as a fused float32 ONNX file under ``tmp``: built from the
    weights for a plain BERT encoder (``onnx_graph``: the default model; no torch), else
    exported by torch (``torch_export``: the ``[torch]`` extra)."""
    from ragingest.models import onnx_graph

    if onnx_graph.supports(folder):
        return onnx_graph.build_bert_graph(folder, tmp / "fused.onnx")
    from ragingest.models.torch_export import export_fused

    return export_fused(folder, tmp)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """No exporter warnings nor the quantizer's root-logger advice on the user's terminal."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        logging.disable(logging.WARNING)
        try:
            yield
        finally:
            logging.disable(logging.NOTSET)


def intra_op_threads() -> int:
    """The threads ONNX Runtime may use: those torch was told to use (a Ray actor sets 1), else
    ``$OMP_NUM_THREADS`` as torch reads it (ONNX Runtime's own build ignores it), else 0 (no
    cap: the cores this process may run on). torch itself is not imported."""
    torch = sys.modules.get("torch")
    return int(torch.get_num_threads()) if torch is not None else omp_threads()


def encode_streams() -> int:
    """Texts run at once, one intra-op thread each: ``intra_op_threads()``, else the cores this
    process may run on. On 2 cores two single-threaded runs embed 1.03-1.43x the texts per
    second of one run on two intra-op threads, for 7-10 % less CPU per text (bench/README.md,
    "Encoder per CPU class"): the ops of one ~180-token text are too small to split across
    threads that sleep between ops, and the vectors are the same bit for bit."""
    threads = intra_op_threads()
    if threads > 0:
        return threads
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1


def omp_threads() -> int:
    """``$OMP_NUM_THREADS`` when it is a whole number of at least 1, else 0 (no cap): the
    variable that caps torch's threads, so several processes on a few cores can each be told
    to use one."""
    raw = os.environ.get("OMP_NUM_THREADS", "").strip()
    return int(raw) if raw.isdigit() and int(raw) > 0 else 0


class ModelInputs(Protocol):
    """The process's one tokenizer as the encoder asks it (``resolve.ModelInfo``)."""

    def model_inputs(self, text: str) -> tuple[list[int], list[int]]: ...


class OnnxSentenceEncoder:
    """The part of ``SentenceTransformer`` ragingest uses, on ONNX Runtime."""

    def __init__(
        self,
        folder: str | Path,
        onnx_file: Path,
        max_seq_length: int,
        tokenizer: ModelInputs | Tokenizer,
        streams: int | None = None,
    ) -> None:
        import onnxruntime as ort

        self.folder = Path(folder)
        self.max_seq_length = max_seq_length
        self.pooling, self.normalize = pooling_config(self.folder)
        # ``ModelInfo.model_inputs`` (the process's one tokenizer), or a tokenizer of our own
        self.tokenizer = tokenizer
        # ``streams`` texts run at once (default ``encode_streams()``), each on one thread of
        # its caller: ONNX Runtime's ``run`` is thread-safe and releases the GIL
        self.streams = max(1, streams or encode_streams())
        self._executor: ThreadPoolExecutor | None = None
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.enable_cpu_mem_arena = False  # the arena keeps the largest batch's memory
        # no intra-op pool, so no idle thread spinning on a core that the process's other
        # threads (a query's lexical and Chroma work) and the machine wait for (100 000
        # chunks, 2 cores: a plain Chroma search's CPU per query 34 -> 16 ms without spinning)
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(
            str(onnx_file), options, providers=["CPUExecutionProvider"]
        )
        self.input_names = [i.name for i in self.session.get_inputs()]

    def encode(
        self,
        sentences: str | Sequence[str],
        prompt: str | None = None,
        batch_size: int = EMBED_BATCH_SIZE,  # unused: one text per run (below)
        normalize_embeddings: bool = False,
        show_progress_bar: bool = False,
        convert_to_numpy: bool = True,
        **_: object,
    ) -> np.ndarray:
        """The vectors of ``sentences`` (one per text, in their order, or one for a single
        string), each text run alone, ``streams`` at once; L2-normalized when asked."""
        single = isinstance(sentences, str)
        texts: list[str] = [sentences] if isinstance(sentences, str) else list(sentences)
        if prompt:
            texts = [prompt + t for t in texts]
        # one text per run, whatever ``batch_size`` says: dynamic int8 quantization scales the
        # activations over the whole input tensor, so in a batch a text's vector would depend
        # on its neighbours (cosine 0.997 between a batch of 16 and alone); alone it is also
        # faster on a CPU, with no padding (64 chunks of 40-250 words: 1.6 s vs 2.8 s)
        # tokenized on this thread: the streams never use the process's shared tokenizer
        inputs = [self._tokenize(text) for text in texts]
        # longest first: the streams finish together (each takes the next text when free)
        order = sorted(range(len(inputs)), key=lambda i: -inputs[i]["input_ids"].shape[1])
        rows = np.zeros((len(texts), 0), dtype=np.float32)
        for i, vector in zip(order, self._runs([inputs[i] for i in order]), strict=True):
            if rows.shape[1] == 0:
                rows = np.empty((len(texts), vector.shape[0]), dtype=np.float32)
            rows[i] = vector
        if normalize_embeddings or self.normalize:
            norms = np.linalg.norm(rows, axis=1, keepdims=True)
            rows = rows / np.clip(norms, 1e-12, None)
        return rows[0] if single else rows

    def _runs(self, inputs: list[dict[str, np.ndarray]]) -> Iterator[np.ndarray]:
        """The pooled vector of each input, in order, ``streams`` runs at once."""
        if self.streams == 1 or len(inputs) < 2:
            return map(self._run, inputs)
        if self._executor is None:
            self._executor = ThreadPoolExecutor(self.streams, thread_name_prefix="onnx-encode")
        return self._executor.map(self._run, inputs)

    def _run(self, encoded: dict[str, np.ndarray]) -> np.ndarray:
        feeds = {name: encoded[name] for name in self.input_names}
        hidden = self.session.run(None, feeds)[0]
        return self._pool_rows(hidden, encoded["attention_mask"])[0]

    def _tokenize(self, text: str) -> dict[str, np.ndarray]:
        """Ids, mask and type ids of one text, cut to ``max_seq_length`` with the special tokens
        (what the ``transformers`` tokenizer gives with ``truncation=True``), without touching
        a shared tokenizer's truncation settings."""
        if hasattr(self.tokenizer, "model_inputs"):  # ragingest's ModelInfo
            ids, type_ids = self.tokenizer.model_inputs(text)
        else:  # a transformers tokenizer or its Rust tokenizer
            rust = getattr(self.tokenizer, "backend_tokenizer", self.tokenizer)
            if rust.padding is not None:  # set by a padded call of the wrapper
                rust.no_padding()
            encoding = rust.encode(text, add_special_tokens=False)
            encoding.truncate(max(0, self.max_seq_length - rust.num_special_tokens_to_add(False)))
            encoding = rust.post_process(encoding, add_special_tokens=True)
            ids, type_ids = encoding.ids, encoding.type_ids
        rows = {"input_ids": ids, "attention_mask": [1] * len(ids), "token_type_ids": type_ids}
        return {k: np.asarray([v], dtype=np.int64) for k, v in rows.items()}

    def _pool_rows(self, hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
        if self.pooling == "cls":
            return hidden[:, 0].astype(np.float32)
        weights = mask[..., None].astype(np.float32)
        if self.pooling == "max":
            return np.where(weights > 0, hidden, -1e9).max(axis=1).astype(np.float32)
        summed = (hidden * weights).sum(axis=1)
        return (summed / np.clip(weights.sum(axis=1), 1e-9, None)).astype(np.float32)


if __name__ == "__main__":  # export_int8's child process
    _export(sys.argv[1], Path(sys.argv[2]))
