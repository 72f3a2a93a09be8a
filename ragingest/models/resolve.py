"""Embedding models loaded once per process: the ``ModelInfo`` (tokenizer, input limit,
prompts) the splitters and the store read without the weights, and the encoder itself (ONNX
Runtime int8 by default, or sentence-transformers on torch). Where a model is comes from
``locate``, its tokenizer from ``hf_tokenizer``.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ragingest.errors import MissingExtraError
from ragingest.models.hf_tokenizer import (
    load_backend_tokenizer,
    quiet_transformers,
    verbatim_tokenizer,
    wrap_tokenizer,
)
from ragingest.models.locate import (
    backend_name,
    cache_dir,
    canonical_name,
    model_fingerprint,
    read_model_json,
    resolve_model_path,
)

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerBase

    from ragingest.models.onnx_backend import OnnxSentenceEncoder
    from ragingest.models.subset_tokenizer import SubsetTokenizer
    from ragingest.models.tokenizer_view import SplitterTokenizer


@dataclass
class ModelInfo:
    """What the splitters and the vector store need to know about a model, without loading
    its weights: the tokenizer, the input limit and the prompts.

    The process has one tokenizer, loaded when first needed: ``backend_tokenizer`` (the Rust
    ``tokenizers.Tokenizer``, read from ``tokenizer.json``) and ``tokenizer``, the
    ``transformers`` fast tokenizer the splitters count with, built around that same
    instance. A process that only embeds queries never loads it: ``model_inputs`` then uses
    the subset tokenizer (``subset_tokenizer``: the same ids, ~0.1 s instead of ~1 s)."""

    name: str
    path: str
    max_seq_length: int
    prompts: dict[str, str]
    fingerprint: str
    backend: str = "torch"
    _backend_tokenizer: Tokenizer | None = field(default=None, repr=False)
    _tokenizer: PreTrainedTokenizerBase | None = field(default=None, repr=False)
    _subset: SubsetTokenizer | None = field(default=None, repr=False)  # once looked for
    _subset_checked: bool = field(default=False, repr=False)
    _counts: tuple[int, int] | None = field(default=None, repr=False)  # specials, prompt

    @property
    def document_prompt(self) -> str:
        """The prefix of texts embedded as documents ('passage: ' for e5; '' for none)."""
        return self.prompts.get("passage", self.prompts.get("document", ""))

    @property
    def query_prompt(self) -> str:
        """The prefix of texts embedded as queries ('query: ' for e5; '' for none)."""
        return self.prompts.get("query", "")

    @property
    def special_tokens(self) -> int:
        """Special tokens the model's inputs get (``<s>``, ``</s>``)."""
        return self._token_counts()[0]

    @property
    def max_embed_tokens(self) -> int:
        """Tokens an embedded text may have: the model's limit less specials and the prompt."""
        specials, prompt = self._token_counts()
        return self.max_seq_length - specials - prompt

    def _token_counts(self) -> tuple[int, int]:
        if self._counts is None:
            prompt = self.document_prompt
            subset = self._subset_tokenizer()
            if subset is not None:
                self._counts = (subset.special_tokens, subset.count(prompt) if prompt else 0)
            else:
                rust = self.backend_tokenizer
                counted = len(rust.encode(prompt, add_special_tokens=False).ids) if prompt else 0
                self._counts = (rust.num_special_tokens_to_add(False), counted)
        return self._counts

    def _subset_tokenizer(self) -> SubsetTokenizer | None:
        """The subset tokenizer while the whole one is not loaded (and the model has one)."""
        if self._backend_tokenizer is not None:
            return None
        if not self._subset_checked:
            self._subset_checked = True
            folder = Path(self.path)
            if folder.is_dir() and verbatim_tokenizer(folder):
                from ragingest.models.subset_tokenizer import SubsetTokenizer

                self._subset = SubsetTokenizer.load(folder / "tokenizer.json", cache_dir())
        return self._subset

    @property
    def backend_tokenizer(self) -> Tokenizer:
        """The Rust tokenizer (``tokenizers.Tokenizer``; no ``transformers`` import), without
        truncation or padding: the wrapper's padded calls leave them set on the Rust side, and
        it clears them itself on its next call without them."""
        if self._backend_tokenizer is None and self._tokenizer is None:
            self._backend_tokenizer = load_backend_tokenizer(Path(self.path))
        if self._backend_tokenizer is None:
            self._backend_tokenizer = self.tokenizer.backend_tokenizer
        rust = self._backend_tokenizer
        if rust.truncation is not None:
            rust.no_truncation()
        if rust.padding is not None:
            rust.no_padding()
        return rust

    @property
    def tokenizer(self) -> PreTrainedTokenizerBase:
        """The ``transformers`` fast tokenizer (what ``AutoTokenizer`` gives for the model),
        around ``backend_tokenizer`` when the model's tokenizer is ``tokenizer.json`` as is."""
        if self._tokenizer is None:
            folder = Path(self.path)
            if self._backend_tokenizer is None:
                self._backend_tokenizer = load_backend_tokenizer(folder)
            self._tokenizer = wrap_tokenizer(folder, self._backend_tokenizer)
            if self.max_seq_length:
                self._tokenizer.model_max_length = self.max_seq_length
            if self._backend_tokenizer is None:
                self._backend_tokenizer = self._tokenizer.backend_tokenizer
        return self._tokenizer

    @property
    def splitter_tokenizer(self) -> PreTrainedTokenizerBase | SplitterTokenizer:
        """What the splitters count with: ``tokenizer`` once loaded, else (the model's
        tokenizer is ``tokenizer.json`` as is) a ``tokenizer_view.SplitterTokenizer`` over
        ``backend_tokenizer`` that imports no ``transformers``: the same counts and offsets."""
        if self._tokenizer is None and verbatim_tokenizer(Path(self.path)):
            from ragingest.models.tokenizer_view import SplitterTokenizer

            _ = self.backend_tokenizer  # loaded now: splitting needs it (no subset one meanwhile)
            return SplitterTokenizer(self)
        return self.tokenizer

    def model_inputs(self, text: str) -> tuple[list[int], list[int]]:
        """``(input_ids, token_type_ids)`` of ``text`` for the model: special tokens added, cut
        at ``max_seq_length`` (the ``transformers`` tokenizer's ``truncation=True``). With the
        whole tokenizer when it is loaded, else with the subset tokenizer (the same ids)."""
        subset = self._subset_tokenizer()
        if subset is not None:
            return subset.model_inputs(text, self.max_seq_length)
        rust = self.backend_tokenizer
        encoding = rust.encode(text, add_special_tokens=False)
        encoding.truncate(max(0, self.max_seq_length - self.special_tokens))
        encoding = rust.post_process(encoding, add_special_tokens=True)
        return list(encoding.ids), list(encoding.type_ids)


def load_model_info(name: str | None = None, backend: str | None = None) -> ModelInfo:
    """The ``ModelInfo`` of model ``name`` (an alias or a name; default model for ``None``) on
    ``backend``, without loading its weights; cached per name and backend."""
    return _load_model_info(canonical_name(name), backend_name(backend))


@functools.cache
def _load_model_info(name: str, backend: str) -> ModelInfo:
    path = resolve_model_path(name)
    folder = Path(path)
    st_config = read_model_json(folder, "sentence_bert_config.json")
    tok_config = read_model_json(folder, "tokenizer_config.json")
    st_prompts = read_model_json(folder, "config_sentence_transformers.json").get("prompts")
    prompts = dict(st_prompts or {})
    info = ModelInfo(
        name=name,
        path=path,
        max_seq_length=0,
        prompts={k: v for k, v in prompts.items() if v},
        fingerprint=model_fingerprint(name, folder, backend) if folder.is_dir() else name,
        backend=backend,
    )
    # the process's one copy of the tokenizer (XLM-R's costs ~280 MB) is loaded when first
    # needed: the splitter counts with it and the model encodes with it
    limit = st_config.get("max_seq_length") or tok_config.get("model_max_length")
    info.max_seq_length = int(limit or info.tokenizer.model_max_length or 512)
    if info._tokenizer is not None:
        info._tokenizer.model_max_length = info.max_seq_length
    return info


def load_sentence_transformer(
    name: str | None = None, backend: str | None = None
) -> SentenceTransformer | OnnxSentenceEncoder:
    """The model itself, loaded once per process, on the CPU unless told otherwise; with the
    onnx backend an ``OnnxSentenceEncoder`` (same ``encode``), exported on first use."""
    return _load_sentence_transformer(canonical_name(name), backend_name(backend))


@functools.cache
def _load_sentence_transformer(
    name: str, backend: str
) -> SentenceTransformer | OnnxSentenceEncoder:
    return _load_model(name, backend)


def _load_model(name: str, backend: str) -> SentenceTransformer | OnnxSentenceEncoder:
    info = load_model_info(name, backend)
    if backend == "onnx":  # no torch, sentence-transformers nor transformers import
        from ragingest.models.onnx_backend import OnnxSentenceEncoder

        onnx_file = onnx_model_file(info)
        return OnnxSentenceEncoder(info.path, onnx_file, info.max_seq_length, info)
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise MissingExtraError("the torch backend (RAGINGEST_BACKEND=torch)", "torch") from exc
    quiet_transformers()

    device = os.environ.get("RAGINGEST_DEVICE", "cpu")
    with _shared_tokenizer(info.tokenizer):
        model = SentenceTransformer(info.path, device=device, local_files_only=True)
    model.max_seq_length = info.max_seq_length
    return model


def onnx_model_file(info: ModelInfo) -> Path:
    """The int8 ONNX file the onnx backend runs ``info``'s model from, exported once into
    ``$RAGINGEST_CACHE_DIR/onnx/<fingerprint>/`` (``onnx_export.export_int8``)."""
    from ragingest.models.onnx_export import export_int8

    return export_int8(info.path, cache_dir() / "onnx" / info.fingerprint)


@contextlib.contextmanager
def _shared_tokenizer(tokenizer: PreTrainedTokenizerBase) -> Iterator[None]:
    """Make sentence-transformers take ``tokenizer`` instead of loading its own copy of it:
    it has no public argument for an instance (6.2: ``Transformer`` always calls
    ``AutoProcessor.from_pretrained``), and a second copy is ~280 MB of RSS."""
    from sentence_transformers.base.modules import transformer as st_transformer

    real = st_transformer.AutoProcessor

    class _Given:
        @staticmethod
        def from_pretrained(*_: object, **__: object) -> PreTrainedTokenizerBase:
            return tokenizer

    st_transformer.AutoProcessor = _Given
    try:
        yield
    finally:
        st_transformer.AutoProcessor = real
