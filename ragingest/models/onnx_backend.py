"""ONNX Runtime (int8) backend for the embedding models, offline: the default backend
(``RAGINGEST_BACKEND=torch`` runs sentence-transformers on torch instead).

sentence-transformers' own ``backend="onnx"`` goes through ``optimum-onnx``, whose only release
needs ``transformers<4.58`` (ours is 5.x), so this module does the same directly: build the
model's fused transformer graph once (``onnx_export.float_graph``: from the weights for a BERT
encoder, without torch; else exported by torch and fused by ONNX Runtime's BERT optimizer),
quantize its weights to int8 (per channel, dynamic), keep it under
``$RAGINGEST_CACHE_DIR/onnx/<fingerprint>/`` (``onnx_export``), and encode with ONNX Runtime
plus the model's own pooling and normalization, read from its sentence-transformers
configuration.

Contract: ``OnnxSentenceEncoder.encode`` takes the arguments ragingest passes to
``SentenceTransformer.encode`` and returns float32 rows in input order (normalized when asked
or when the model ends with a ``Normalize`` module); texts over ``max_seq_length`` tokens are
truncated as sentence-transformers does; a text's vector depends on that text alone (one text
per run, see ``encode``).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ragingest.defaults import EMBED_BATCH_SIZE

if TYPE_CHECKING:
    from tokenizers import Tokenizer


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
